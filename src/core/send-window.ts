/**
 * Send windows and send times of a folder, pure. A window is a range of wall-clock time on chosen
 * days in a time zone; whether it is open is asked of the instant itself (not of timers that fire
 * at its edges), so a daylight-saving change neither skips nor doubles it: the window of a day is
 * the instants from the first reaching of `from` to the first reaching of `to` that day
 * (zoned-time.ts), and a wall time the change repeats does not reopen it.
 */
import { firstInstantAt, localDateText, TIME_UNITS, wallTime, weekdayOf } from './zoned-time.js';

export interface SendWindow {
  /** ISO weekdays (1 = Monday … 7 = Sunday) on which the window opens. */
  days: readonly number[];
  /** Minutes after local midnight: opens at `from`, closes at `to` (from < to, to ≤ 1440). */
  from: number;
  to: number;
  timeZone: string;
  /** Local dates (`YYYY-MM-DD`) on which it stays closed. */
  except: readonly string[];
}

/** Looked at this many days ahead at most (a year, and each day `except` can take away). */
function horizonDays(window: Pick<SendWindow, 'except'>): number {
  return 366 + 7 + window.except.length;
}

function opensOn(window: SendWindow, date: number): boolean {
  return window.days.includes(weekdayOf(date)) && !window.except.includes(localDateText(date));
}

/** The window's instants on a local date: [open, close); undefined when it does not open that day. */
function rangeOn(window: SendWindow, date: number): { open: number; close: number } | undefined {
  if (!opensOn(window, date)) return undefined;
  const open = firstInstantAt(date, window.from, window.timeZone);
  const close = firstInstantAt(date, window.to, window.timeZone);
  // A window inside the hour a spring-forward change skips is empty that day.
  return close > open ? { open, close } : undefined;
}

export function isOpen(window: SendWindow, instant: number): boolean {
  const range = rangeOn(window, wallTime(instant, window.timeZone).date);
  return range !== undefined && range.open <= instant && instant < range.close;
}

/**
 * When the window is open next: `instant` itself when it is open now; undefined when it never opens
 * within a year (no day left by `days` and `except`).
 */
export function nextOpening(window: SendWindow, instant: number): number | undefined {
  if (isOpen(window, instant)) return instant;
  const today = wallTime(instant, window.timeZone).date;
  for (let k = 0; k <= horizonDays(window); k++) {
    const range = rangeOn(window, today + k * TIME_UNITS.DAY_MS);
    if (range && range.open > instant) return range.open;
  }
  return undefined;
}

/** When the window closes next, while it is open at `instant` (undefined when it is closed). */
export function closingOf(window: SendWindow, instant: number): number | undefined {
  const range = rangeOn(window, wallTime(instant, window.timeZone).date);
  return range && range.open <= instant && instant < range.close ? range.close : undefined;
}

/** A folder's rule for `sendingEventExecutionDateUtc`: the next time of day, or a fixed delay. */
export type SendAtRule = { at: number; days: readonly number[]; timeZone: string } | { delayMs: number };

/**
 * The execution time a rule gives a job created at `instant`: `instant + delay`, or the first time
 * of day `at` on one of `days` strictly after `instant` (today's when it is still ahead).
 */
export function nextSendTime(rule: SendAtRule, instant: number): number {
  if ('delayMs' in rule) return instant + rule.delayMs;
  const today = wallTime(instant, rule.timeZone).date;
  for (let k = 0; k <= 8; k++) {
    const date = today + k * TIME_UNITS.DAY_MS;
    if (!rule.days.includes(weekdayOf(date))) continue;
    const at = firstInstantAt(date, rule.at, rule.timeZone);
    if (at > instant) return at;
  }
  // Unreachable with at least one day (the schema asks for one): a week holds every weekday.
  return instant;
}

/**
 * An execution date as a row gives it: ISO 8601 with its offset (`2026-12-01T09:00:00+01:00`,
 * `…Z`), seconds and fractions optional; answers epoch ms, or undefined when the text is not one
 * (no offset, a day that does not exist, anything else). A date without an offset is refused
 * rather than read in some zone: the agent's own zone is not the ERP's.
 */
export function parseExecutionDate(text: string): number | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/i.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = '00', frac = '0', zone = 'Z'] = m;
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(local);
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi) ||
    check.getUTCSeconds() !== Number(s)
  )
    return undefined;
  let offsetMin = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.replace(':', '');
    const oh = Number(digits.slice(1, 3));
    const om = Number(digits.slice(3, 5));
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (digits[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return local - offsetMin * TIME_UNITS.MINUTE_MS + Math.floor(Number(`0.${frac}`) * 1000);
}
