/**
 * One line of `docex-agent check` / `credentials check`: a mark, what was checked, what was found,
 * and for a failure or a warning how to fix it. Marks on a terminal, words otherwise (grep-able
 * in logs and CI output).
 */
export interface CheckLine {
  ok: boolean;
  /** Passes, but needs attention soon (a certificate expiring within 30 days, little free disk). */
  warn?: boolean;
  what: string;
  detail: string;
  hint?: string;
}

export interface FormatOptions {
  /** `ok`/`WARN`/`FAIL` instead of ✔/!/✘ (output not on a terminal). */
  plain?: boolean;
}

function mark(line: CheckLine, plain: boolean): string {
  if (!line.ok) return plain ? 'FAIL' : '✘';
  if (line.warn) return plain ? 'WARN' : '!';
  return plain ? 'ok  ' : '✔';
}

export function formatCheck(line: CheckLine, options: FormatOptions = {}): string {
  const showHint = (!line.ok || line.warn) && line.hint;
  const hint = showHint ? `\n    fix: ${line.hint}` : '';
  return `${mark(line, options.plain ?? false)} ${line.what}: ${line.detail}${hint}\n`;
}

/** Marks when stdout is a terminal that can show them. */
export function plainOutput(stream: { isTTY?: boolean } = process.stdout): boolean {
  return !stream.isTTY || process.env['TERM'] === 'dumb';
}

export const failed = (lines: readonly CheckLine[]) => lines.some((l) => !l.ok);
