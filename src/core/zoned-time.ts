/**
 * Wall-clock time in a named time zone (IANA, `Europe/Brussels`), with Node's own Intl data: what
 * day and minute an instant is there, and the first instant a wall time is reached. Pure: instants
 * are epoch ms, local dates are the epoch ms of their UTC midnight (`Date.UTC(y, m - 1, d)`).
 * Daylight saving: a wall time skipped by a spring-forward change is reached at the change itself;
 * one that happens twice (fall back) is reached at its first occurrence.
 */

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** ISO weekday numbers: 1 = Monday … 7 = Sunday. */
const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

/** One day name in any case, spelled out letter by letter: JSON Schema patterns take no `i` flag. */
const DAY = `(?:${WEEKDAY_NAMES.map((d) => [...d].map((c) => `[${c.toUpperCase()}${c.toLowerCase()}]`).join('')).join('|')})`;
const DAY_OR_RANGE = `${DAY}(?:\\s*-\\s*${DAY})?`;

/** `Mon-Fri`, `Sat,Sun`, `Mon,Wed-Fri`, `Fri-Mon` (a range may wrap over Sunday); any case. */
export const DAYS_PATTERN = new RegExp(`^\\s*${DAY_OR_RANGE}(?:\\s*,\\s*${DAY_OR_RANGE})*\\s*$`);

/** `07:00`, `7:30`, `24:00` (the end of the day). */
export const TIME_OF_DAY_PATTERN = /^([01]?\d|2[0-3]):[0-5]\d$|^24:00$/;

/** A local date as `YYYY-MM-DD`. */
const LOCAL_DATE_PATTERN = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

function dayNumber(name: string): number {
  return WEEKDAY_NAMES.findIndex((d) => d.toLowerCase() === name.trim().toLowerCase()) + 1;
}

/** The ISO weekdays a days text names, sorted; undefined when the text is not one (DAYS_PATTERN). */
export function parseDays(text: string): number[] | undefined {
  if (!DAYS_PATTERN.test(text)) return undefined;
  const days = new Set<number>();
  for (const part of text.split(',')) {
    const [first, last] = part.split('-').map(dayNumber);
    if (!first) return undefined;
    if (!last) {
      days.add(first);
      continue;
    }
    for (let d = first, n = 0; n < 7; d = (d % 7) + 1, n++) {
      days.add(d);
      if (d === last) break;
    }
  }
  return [...days].sort((a, b) => a - b);
}

/** Minutes after midnight of `HH:MM`; undefined when the text is not one. */
export function parseTimeOfDay(text: string): number | undefined {
  if (!TIME_OF_DAY_PATTERN.test(text)) return undefined;
  const [h, m] = text.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/** Whether a local date text names a real day (`2026-02-30` does not). */
export function isLocalDate(text: string): boolean {
  if (!LOCAL_DATE_PATTERN.test(text)) return false;
  return new Date(Date.parse(`${text}T00:00:00Z`)).toISOString().slice(0, 10) === text;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether Node's time zone data knows this IANA name. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock at `instant` in `timeZone`, read as if it were UTC (epoch ms). */
function wallMs(instant: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(instant)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const ms = ((instant % 1000) + 1000) % 1000;
  return (
    Date.UTC(
      fields['year'] ?? 1970,
      (fields['month'] ?? 1) - 1,
      fields['day'] ?? 1,
      fields['hour'] ?? 0,
      fields['minute'] ?? 0,
      fields['second'] ?? 0,
    ) + ms
  );
}

export interface WallTime {
  /** The local date (epoch ms of its UTC midnight). */
  date: number;
  /** ISO weekday of the local date: 1 = Monday … 7 = Sunday. */
  weekday: number;
  /** Minutes after local midnight. */
  minutes: number;
}

export function wallTime(instant: number, timeZone: string): WallTime {
  const wall = wallMs(instant, timeZone);
  const date = Math.floor(wall / DAY_MS) * DAY_MS;
  return { date, weekday: weekdayOf(date), minutes: Math.floor((wall - date) / MINUTE_MS) };
}

/** ISO weekday of a local date (epoch ms of its UTC midnight). */
export function weekdayOf(date: number): number {
  return ((new Date(date).getUTCDay() + 6) % 7) + 1;
}

/** `YYYY-MM-DD` of a local date. */
export function localDateText(date: number): string {
  return new Date(date).toISOString().slice(0, 10);
}

/**
 * The first instant at which the wall clock of `timeZone` reads `minutes` after the midnight of
 * `date` or later: the instant itself on an ordinary day, the change on a spring-forward day that
 * skips it, its first occurrence on a fall-back day that repeats it. `minutes` may be 1440 (the
 * next midnight).
 */
export function firstInstantAt(date: number, minutes: number, timeZone: string): number {
  const target = date + minutes * MINUTE_MS;
  const offsetAt = (t: number) => wallMs(t, timeZone) - t;
  // The offsets a day either side: a change between them is the only one near the target.
  const candidates = [target - offsetAt(target - DAY_MS), target - offsetAt(target + DAY_MS)];
  const exact = candidates.filter((t) => wallMs(t, timeZone) === target);
  if (exact.length > 0) return Math.min(...exact);
  // Skipped by a spring-forward change: the first instant whose wall clock is past the target.
  let low = Math.min(...candidates);
  let high = Math.max(...candidates);
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (wallMs(mid, timeZone) >= target) high = mid;
    else low = mid;
  }
  return wallMs(low, timeZone) >= target ? low : high;
}

export const TIME_UNITS = { DAY_MS, MINUTE_MS } as const;
