/**
 * A progress line for long commands (`submit` of a large file, `report`, `usage export`): on a
 * terminal it is rewritten in place on stderr at most a few times a second; anywhere else (a
 * pipe, a file, cron) nothing is written, so scripts read exactly what they read before.
 * The formatter is pure; the line keeps the time and the terminal.
 */
import type { TextSink } from './cli-io.js';

export interface ProgressState {
  /** What is being done, e.g. `uploading invoice.pdf`. */
  label: string;
  /** Amount done so far (bytes or items). */
  done: number;
  /** Amount in all, when known. */
  total?: number | undefined;
  unit: 'bytes' | 'items';
  /** Noun of an item (`rows`, `events`); items only. */
  noun?: string;
  /** Time since the work started, in ms. */
  elapsedMs: number;
  /** Where the work is, when the amount alone does not say it (the date of the last event). */
  at?: string | undefined;
}

const MIB = 1024 * 1024;

/** `12.3 MiB`, `512 KiB`, `900 B` (binary units, one decimal from MiB up). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * MIB) return `${(bytes / (1024 * MIB)).toFixed(1)} GiB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${Math.round(bytes)} B`;
}

/** `45 s`, `3 min 05 s`, `2 h 07 min`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * One line: what, how much of how much (percent), the rate, and the time left. Rate and time
 * left appear once there is a second of history to base them on.
 */
export function formatProgress(p: ProgressState): string {
  const bytes = p.unit === 'bytes';
  const amount = (n: number) => (bytes ? formatBytes(n) : count(n));
  const noun = bytes ? '' : ` ${p.noun ?? 'items'}`;
  const parts = [
    p.total !== undefined && p.total > 0
      ? `${amount(p.done)} of ${amount(p.total)}${noun} (${Math.floor((Math.min(p.done, p.total) / p.total) * 100)} %)`
      : `${amount(p.done)}${noun}`,
  ];
  if (p.at !== undefined) parts.push(`at ${p.at}`);
  if (p.elapsedMs >= 1000 && p.done > 0) {
    const perSecond = p.done / (p.elapsedMs / 1000);
    parts.push(bytes ? `${formatBytes(perSecond)}/s` : `${count(perSecond)}${noun}/s`);
    if (p.total !== undefined && p.total > p.done) {
      parts.push(`${formatDuration(((p.total - p.done) / perSecond) * 1000)} left`);
    }
  }
  return `${p.label}: ${parts.join(', ')}`;
}

/** Where a progress line goes: stderr, when it is a terminal (`isTTY`). */
export type ProgressSink = TextSink;

export interface ProgressLineOptions {
  /** Real time in ms (performance.now by default). */
  now?: () => number;
  /** Least time between two rewrites (250 ms: four a second at most). */
  minIntervalMs?: number;
}

export interface ProgressLine {
  /** The new amount done (and where); rewrites the line when its time has come. */
  update(done: number, at?: string): void;
  /** Clears the line, so what the command prints next starts on a clean line. */
  end(): void;
}

const NO_PROGRESS: ProgressLine = { update: () => {}, end: () => {} };

/** `\r` back to the start of the line, `ESC [ K` erases what a longer line before left. */
const REWRITE = '\r\u001b[K';

export function progressLine(
  sink: ProgressSink,
  what: Omit<ProgressState, 'done' | 'elapsedMs'>,
  options: ProgressLineOptions = {},
): ProgressLine {
  if (sink.isTTY !== true) return NO_PROGRESS;
  const now = options.now ?? (() => performance.now());
  const minIntervalMs = options.minIntervalMs ?? 250;
  // The clock starts at the first amount reported (the upload's first bytes), not when the
  // line is made: what comes before (the SHA-256 of the file, the create) would lower the rate.
  let startedAt: number | undefined;
  let shownAt = Number.NEGATIVE_INFINITY;
  let shown = false;
  return {
    update(done, at) {
      const t = now();
      startedAt ??= t;
      if (t - shownAt < minIntervalMs) return;
      shownAt = t;
      shown = true;
      sink.write(`${REWRITE}${formatProgress({ ...what, done, at, elapsedMs: t - startedAt })}`);
    },
    end() {
      if (shown) sink.write(REWRITE);
      shown = false;
    },
  };
}
