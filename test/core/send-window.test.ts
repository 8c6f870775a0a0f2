import { describe, expect, it } from 'vitest';
import {
  closingOf,
  isOpen,
  nextOpening,
  nextSendTime,
  parseExecutionDate,
  type SendWindow,
} from '../../src/core/send-window.js';
import { isLocalDate, isTimeZone, parseDays, parseTimeOfDay } from '../../src/core/zoned-time.js';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;

function window(over: Partial<SendWindow> = {}): SendWindow {
  return {
    days: [1, 2, 3, 4, 5],
    from: 7 * 60,
    to: 20 * 60,
    timeZone: 'Europe/Brussels',
    except: [],
    ...over,
  };
}

/** Minutes the window is open in [start, end), and how many separate ranges it opens in. */
function openMinutes(w: SendWindow, start: number, end: number): { minutes: number; ranges: number } {
  let minutes = 0;
  let ranges = 0;
  let before = false;
  for (let t = start; t < end; t += MINUTE) {
    const open = isOpen(w, t);
    if (open) minutes++;
    if (open && !before) ranges++;
    before = open;
  }
  return { minutes, ranges };
}

describe('send window: open or closed at an instant', () => {
  it('is open from `from` to just before `to` on its days, in the zone’s wall clock', () => {
    const w = window();
    // Wednesday 14 January 2026, CET (UTC+1).
    expect(isOpen(w, at('2026-01-14T05:59:59.999Z'))).toBe(false);
    expect(isOpen(w, at('2026-01-14T06:00:00Z'))).toBe(true);
    expect(isOpen(w, at('2026-01-14T18:59:59.999Z'))).toBe(true);
    expect(isOpen(w, at('2026-01-14T19:00:00Z'))).toBe(false);
    // Saturday: not one of Mon-Fri.
    expect(isOpen(w, at('2026-01-17T10:00:00Z'))).toBe(false);
  });

  it('opens next on Monday morning after a Friday evening, and answers now while open', () => {
    const w = window();
    expect(nextOpening(w, at('2026-01-16T19:00:00Z'))).toBe(at('2026-01-19T06:00:00Z'));
    expect(nextOpening(w, at('2026-01-14T10:00:00Z'))).toBe(at('2026-01-14T10:00:00Z'));
    expect(closingOf(w, at('2026-01-14T10:00:00Z'))).toBe(at('2026-01-14T19:00:00Z'));
    expect(closingOf(w, at('2026-01-17T10:00:00Z'))).toBeUndefined();
  });

  it('stays closed on an `except` date and opens on the next working day after it', () => {
    const w = window({ except: ['2026-12-25'] });
    expect(isOpen(w, at('2026-12-25T10:00:00Z'))).toBe(false);
    // Thursday evening: Friday is a holiday, the weekend is not Mon-Fri.
    expect(nextOpening(w, at('2026-12-24T19:00:00Z'))).toBe(at('2026-12-28T06:00:00Z'));
  });

  it('closes at midnight with to 24:00', () => {
    const w = window({ from: 22 * 60, to: 24 * 60 });
    expect(isOpen(w, at('2026-01-14T22:59:00Z'))).toBe(true);
    expect(isOpen(w, at('2026-01-14T23:00:00Z'))).toBe(false);
  });

  it('opens on its one day when days names a single weekday', () => {
    const w = window({ days: [6], except: [] });
    expect(nextOpening(w, at('2026-01-14T10:00:00Z'))).toBe(at('2026-01-17T06:00:00Z'));
  });
});

describe('send window across daylight-saving changes (Europe/Brussels 2026)', () => {
  const daily = window({ days: [1, 2, 3, 4, 5, 6, 7] });

  it('spring forward (29 March): opens at 07:00 local on both sides, 13 hours each day, one range a day', () => {
    expect(nextOpening(daily, at('2026-03-28T19:00:00Z'))).toBe(at('2026-03-29T05:00:00Z'));
    expect(isOpen(daily, at('2026-03-28T06:00:00Z'))).toBe(true);
    expect(isOpen(daily, at('2026-03-29T04:59:00Z'))).toBe(false);
    expect(isOpen(daily, at('2026-03-29T05:00:00Z'))).toBe(true);
    expect(isOpen(daily, at('2026-03-29T18:00:00Z'))).toBe(false);
    expect(openMinutes(daily, at('2026-03-28T00:00:00Z'), at('2026-03-30T00:00:00Z'))).toEqual({
      minutes: 2 * 13 * 60,
      ranges: 2,
    });
  });

  it('fall back (25 October): opens at 07:00 local on both sides, 13 hours each day, one range a day', () => {
    expect(nextOpening(daily, at('2026-10-24T19:00:00Z'))).toBe(at('2026-10-25T06:00:00Z'));
    expect(isOpen(daily, at('2026-10-24T05:00:00Z'))).toBe(true);
    expect(isOpen(daily, at('2026-10-25T05:59:00Z'))).toBe(false);
    expect(openMinutes(daily, at('2026-10-24T00:00:00Z'), at('2026-10-26T00:00:00Z'))).toEqual({
      minutes: 2 * 13 * 60,
      ranges: 2,
    });
  });

  it('a window starting in the skipped hour opens at the change itself', () => {
    const w = window({ days: [7], from: 2 * 60 + 30, to: 4 * 60 });
    // 02:00 CET jumps to 03:00 CEST at 01:00Z: 02:30 is never shown, the window opens at 03:00.
    expect(nextOpening(w, at('2026-03-28T12:00:00Z'))).toBe(at('2026-03-29T01:00:00Z'));
    expect(closingOf(w, at('2026-03-29T01:00:00Z'))).toBe(at('2026-03-29T02:00:00Z'));
  });

  it('a window ending in the repeated hour is not opened a second time when 02:00 comes again', () => {
    const w = window({ days: [7], from: 60, to: 2 * 60 + 30 });
    // 01:00 CEST = 23:00Z; the first 02:30 CEST = 00:30Z; 02:00-02:59 comes again as CET from 01:00Z.
    expect(openMinutes(w, at('2026-10-24T12:00:00Z'), at('2026-10-25T12:00:00Z'))).toEqual({
      minutes: 90,
      ranges: 1,
    });
    expect(isOpen(w, at('2026-10-25T01:15:00Z'))).toBe(false);
  });
});

describe('send window across daylight-saving changes (America/New_York 2026)', () => {
  const office = window({ from: 9 * 60, to: 17 * 60, timeZone: 'America/New_York' });

  it('opens at 09:00 local before and after the March change (8 March), a different UTC hour', () => {
    expect(nextOpening(office, at('2026-03-06T22:00:00Z'))).toBe(at('2026-03-09T13:00:00Z'));
    expect(isOpen(office, at('2026-03-06T14:00:00Z'))).toBe(true);
    expect(isOpen(office, at('2026-03-06T13:59:00Z'))).toBe(false);
  });

  it('opens at 09:00 local before and after the November change (1 November)', () => {
    expect(nextOpening(office, at('2026-10-30T21:00:00Z'))).toBe(at('2026-11-02T14:00:00Z'));
    expect(isOpen(office, at('2026-10-30T13:00:00Z'))).toBe(true);
    expect(isOpen(office, at('2026-11-02T13:59:00Z'))).toBe(false);
  });
});

describe('days, times of day, zones and dates as written in the configuration', () => {
  it('reads day ranges and lists, any case, a range wrapping over Sunday', () => {
    expect(parseDays('Mon-Fri')).toEqual([1, 2, 3, 4, 5]);
    expect(parseDays('Sat,Sun')).toEqual([6, 7]);
    expect(parseDays('mon, wed-fri')).toEqual([1, 3, 4, 5]);
    expect(parseDays('Fri-Mon')).toEqual([1, 5, 6, 7]);
    expect(parseDays('Mon-Sun')).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(parseDays('Funday')).toBeUndefined();
    expect(parseDays('Mon-')).toBeUndefined();
  });

  it('reads HH:MM up to 24:00, zones Node knows, and real local dates only', () => {
    expect(parseTimeOfDay('07:00')).toBe(420);
    expect(parseTimeOfDay('7:30')).toBe(450);
    expect(parseTimeOfDay('24:00')).toBe(1440);
    expect(parseTimeOfDay('24:30')).toBeUndefined();
    expect(parseTimeOfDay('7h')).toBeUndefined();
    expect(isTimeZone('Europe/Brussels')).toBe(true);
    expect(isTimeZone('Europe/Bruxelles')).toBe(false);
    expect(isLocalDate('2026-12-25')).toBe(true);
    expect(isLocalDate('2026-02-30')).toBe(false);
  });
});

describe('send time of a folder rule', () => {
  const nineOnWorkdays = { at: 9 * 60, days: [1, 2, 3, 4, 5], timeZone: 'Europe/Brussels' };

  it('is today’s time when still ahead, else the next working day’s, in the zone’s wall clock', () => {
    expect(nextSendTime(nineOnWorkdays, at('2026-01-14T07:00:00Z'))).toBe(at('2026-01-14T08:00:00Z'));
    expect(nextSendTime(nineOnWorkdays, at('2026-01-14T08:00:00Z'))).toBe(at('2026-01-15T08:00:00Z'));
    // Friday after nine, the week before the spring change: Monday 09:00 CEST = 07:00Z.
    expect(nextSendTime(nineOnWorkdays, at('2026-03-27T09:00:00Z'))).toBe(at('2026-03-30T07:00:00Z'));
  });

  it('is a fixed delay after the instant with a delay rule', () => {
    expect(nextSendTime({ delayMs: 2 * 3_600_000 }, at('2026-01-14T07:00:00Z'))).toBe(
      at('2026-01-14T09:00:00Z'),
    );
  });
});

describe('execution date of a row', () => {
  it('takes ISO 8601 with Z or an offset, seconds and fractions optional', () => {
    expect(parseExecutionDate('2026-12-01T09:00:00+01:00')).toBe(at('2026-12-01T08:00:00Z'));
    expect(parseExecutionDate('2026-12-01T09:00+0100')).toBe(at('2026-12-01T08:00:00Z'));
    expect(parseExecutionDate('2026-12-01 08:00:00Z')).toBe(at('2026-12-01T08:00:00Z'));
    expect(parseExecutionDate('2026-12-01T08:00:00.250Z')).toBe(at('2026-12-01T08:00:00.250Z'));
    expect(parseExecutionDate('2026-06-01T09:00:00-04:00')).toBe(at('2026-06-01T13:00:00Z'));
  });

  it('refuses a date without an offset, a day that does not exist and anything else', () => {
    expect(parseExecutionDate('2026-12-01T09:00:00')).toBeUndefined();
    expect(parseExecutionDate('2026-02-30T09:00:00Z')).toBeUndefined();
    expect(parseExecutionDate('2026-12-01T25:00:00Z')).toBeUndefined();
    expect(parseExecutionDate('tomorrow')).toBeUndefined();
    expect(parseExecutionDate('01/12/2026 09:00')).toBeUndefined();
  });
});
