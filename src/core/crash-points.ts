/**
 * Named points where a crash changes what recovery must do. A test ends the process at one of them
 * with `DOCEX_TEST_CRASH_AT=<point>` (or `<point>:<n>`, the n-th time it is reached) and checks
 * what the next start makes of it. Unset, a point costs one comparison.
 */
export const CRASH_POINTS = [
  /** A file's claim is recorded; nothing checked or sent yet. */
  'after-claim',
  /** A file's inspection (its bytes parsed) is recorded as started and has not ended. */
  'mid-inspection',
  /** A payload file's rows are recorded, before any job is asked for. */
  'after-rows',
  /** The create intent is on disk; the request is not sent. */
  'before-create',
  /** The service answered the create; the journal does not know the job yet. */
  'after-create',
  /** The job is recorded; the upload has not started. */
  'after-created',
  /** The service confirmed the upload; the journal does not know it yet. */
  'after-upload',
  /** The file is in the archive; its item is not yet done. */
  'mid-archive',
  /** An output's temporary file is written; it is not renamed into place. */
  'mid-output',
  /** A failed try and the wait before the next are recorded; the wait has not started. */
  'after-failed-try',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

interface Armed {
  point: string;
  nth: number;
  seen: number;
}

function arm(spec: string | undefined): Armed | undefined {
  if (!spec) return undefined;
  const [point = '', nth = '1'] = spec.split(':');
  if (!(CRASH_POINTS as readonly string[]).includes(point)) {
    throw new Error(`DOCEX_TEST_CRASH_AT: unknown crash point ${JSON.stringify(point)}`);
  }
  return { point, nth: Math.max(1, Number.parseInt(nth, 10) || 1), seen: 0 };
}

const armed = arm(process.env['DOCEX_TEST_CRASH_AT']);

/** Ends the process at once (SIGKILL: no finally, no flush) when this point is the armed one. */
export function crashPoint(point: CrashPoint): void {
  if (armed === undefined || armed.point !== point) return;
  armed.seen++;
  if (armed.seen >= armed.nth) process.kill(process.pid, 'SIGKILL');
}
