/** The clock is passed in everywhere time matters, so tests can cross the 2-hour window instantly. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current = Date.parse('2026-11-21T10:00:00.000Z')) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(epochMs: number): void {
    this.current = epochMs;
  }
}

/** The wire format of every timestamp: UTC ISO 8601 with milliseconds. */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
