/**
 * When a folder's jobs are created (`window`) and when the service sends their documents
 * (`sendAt`): wall-clock times in a named time zone, read into the pure shapes of
 * core/send-window.ts. A folder without them creates jobs at any hour and sends at once.
 */
import { z } from 'zod';
import type { SendAtRule, SendWindow } from '../core/send-window.js';
import {
  DAYS_PATTERN,
  isLocalDate,
  isTimeZone,
  parseDays,
  parseTimeOfDay,
  TIME_OF_DAY_PATTERN,
} from '../core/zoned-time.js';
import { DURATION_PATTERN, parseDuration } from './units.js';

const DAYS_MESSAGE = 'expected days such as Mon-Fri, Sat,Sun or Mon,Wed-Fri';

/** Days as `Mon-Fri`, `Sat,Sun`, or a list of such (`[Mon, Wed-Fri]`); out: ISO weekdays. */
function days() {
  return z
    .union([
      z.string().regex(DAYS_PATTERN, DAYS_MESSAGE),
      z.array(z.string().regex(DAYS_PATTERN, DAYS_MESSAGE)).min(1),
    ])
    .transform((v) => parseDays(Array.isArray(v) ? v.join(',') : v) ?? [])
    .prefault('Mon-Sun');
}

function timeOfDay() {
  return z.string().regex(TIME_OF_DAY_PATTERN, 'expected a time of day such as 07:00 (00:00 to 24:00)');
}

function timeZone() {
  return z
    .string()
    .refine(isTimeZone, 'expected an IANA time zone such as Europe/Brussels or America/New_York')
    .describe('IANA time zone the times are read in; daylight saving follows it.')
    .meta({ examples: ['Europe/Brussels'] });
}

export const sendWindowSchema = z
  .strictObject({
    days: days().describe('Days the window opens: Mon-Fri, Sat,Sun, Mon,Wed-Fri (default every day).'),
    from: timeOfDay()
      .describe('Wall-clock time the window opens, in timeZone.')
      .meta({ examples: ['07:00'] }),
    to: timeOfDay()
      .describe('Wall-clock time the window closes (24:00: midnight); later than from, the same day.')
      .meta({ examples: ['20:00'] }),
    timeZone: timeZone(),
    except: z
      .array(z.string().refine(isLocalDate, 'expected a date such as 2026-12-25'))
      .default([])
      .describe('Dates (YYYY-MM-DD, in timeZone) the window stays closed: public holidays.')
      .meta({ examples: [['2026-12-25', '2027-01-01']] }),
  })
  .superRefine((w, refinement) => {
    const from = parseTimeOfDay(w.from);
    const to = parseTimeOfDay(w.to);
    // Each one that is not a time of day has its own message already.
    if (from !== undefined && to !== undefined && from >= to) {
      refinement.addIssue({
        code: 'custom',
        path: ['to'],
        message: `to (${w.to}) must be later than from (${w.from}): a window opens and closes on the same day (write 24:00 for midnight; a window across midnight is not supported)`,
      });
    }
  })
  .transform(
    (w): SendWindow => ({
      days: w.days,
      from: parseTimeOfDay(w.from) ?? 0,
      to: parseTimeOfDay(w.to) ?? 0,
      timeZone: w.timeZone,
      except: w.except,
    }),
  )
  .describe(
    'When jobs of this folder are created. Outside the window files are still taken and checked at once (a bad file is refused at once), but no job is created until it opens; a single file is created and uploaded in one go when it does. Absent: any time.',
  );

export const sendAtSchema = z
  .strictObject({
    at: timeOfDay()
      .optional()
      .describe('Send at the next such wall-clock time (on days, in timeZone) after the job is created.')
      .meta({ examples: ['09:00'] }),
    days: days().describe('With at: the days it may be (default every day).'),
    timeZone: timeZone().optional(),
    delay: z
      .union([
        z.number().int().positive(),
        z.string().regex(DURATION_PATTERN, 'expected a duration such as 30m, 2h or 1d'),
      ])
      .optional()
      .describe('Instead of at: send this long after the job is created (30m, 2h, 1d).')
      .meta({ examples: ['2h'] }),
  })
  .superRefine((s, refinement) => {
    if ((s.at === undefined) === (s.delay === undefined)) {
      refinement.addIssue({ code: 'custom', message: 'give either at (with timeZone) or delay, not both' });
    }
    if (s.at !== undefined && s.timeZone === undefined) {
      refinement.addIssue({
        code: 'custom',
        path: ['timeZone'],
        message: 'at needs the time zone it is read in (timeZone: Europe/Brussels)',
      });
    }
    if (
      s.delay !== undefined &&
      (typeof s.delay === 'number' ? s.delay : (parseDuration(s.delay) ?? 0)) <= 0
    ) {
      refinement.addIssue({ code: 'custom', path: ['delay'], message: 'must be longer than 0' });
    }
  })
  .transform(
    (s): SendAtRule =>
      s.delay !== undefined
        ? { delayMs: typeof s.delay === 'number' ? s.delay : (parseDuration(s.delay) ?? 0) }
        : { at: parseTimeOfDay(s.at ?? '') ?? 0, days: s.days, timeZone: s.timeZone ?? 'UTC' },
  )
  .describe(
    "Payload folders (payload-pdf, payload-word) and a folder's payload-word routes: the sendingEventExecutionDateUtc each job carries, so the service sends its documents then. A row's own executionDate (or sendingEventExecutionDateUtc) column wins. Absent: sent at once.",
  );
