/**
 * Durations and byte sizes as people write them in YAML (`2s`, `10m`, `100MiB`) or as plain
 * numbers. Pure functions: the schema uses them to turn the text into milliseconds and bytes.
 */

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const SIZE_UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

/** A duration text: a number with one unit, or a bare number of milliseconds. */
export const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/;
/**
 * A size text: a number with one unit (B, KB, MB, GB, KiB, MiB, GiB; any case) or bare bytes.
 * No `i` flag: the pattern goes into the JSON Schema, whose patterns have no flags.
 */
export const BYTE_SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([kKmMgG][iI]?[bB]|[bB])?\s*$/;

/** Milliseconds from `500ms`, `2s`, `10m`, `2h`, `1d` or `1500`; undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION_PATTERN.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (DURATION_UNITS_MS[m[2] ?? 'ms'] ?? 1));
}

/** The shortest exact text of a duration: 2000 → `2s`, 7_200_000 → `2h`, 1500 → `1500ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = DURATION_UNITS_MS[unit] ?? 1;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Bytes from `100MiB`, `1GB`, `512kb` or `1048576`; undefined when the text is not one. */
export function parseByteSize(text: string): number | undefined {
  const m = BYTE_SIZE_PATTERN.exec(text);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] ?? 'b').toLowerCase()] ?? 1));
}

/** The shortest exact binary-unit text of a size: 1073741824 → `1GiB`. */
export function formatByteSize(bytes: number): string {
  for (const unit of ['GiB', 'MiB', 'KiB'] as const) {
    const size = SIZE_UNITS[unit.toLowerCase()] ?? 1;
    if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${bytes}B`;
}

const RATE_UNITS_MS: Readonly<Record<string, number>> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
};

/** A rate text: a whole number of calls per second, minute or hour (`10/s`, `600/min`, `5000/h`). */
export const RATE_PATTERN = /^\s*([1-9]\d*)\s*\/\s*(s|sec|second|m|min|minute|h|hour)\s*$/;

/** Calls per period from `600/min`, `10/s` or `5000/h`; undefined when the text is not one. */
export function parseRate(text: string): { count: number; perMs: number } | undefined {
  const m = RATE_PATTERN.exec(text);
  if (!m) return undefined;
  return { count: Number(m[1]), perMs: RATE_UNITS_MS[m[2]!] ?? 60_000 };
}
