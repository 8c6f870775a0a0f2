/**
 * The journal's database does not answer (PostgreSQL down, failing over, cut off): nothing
 * irreversible can happen without its write first, so the pipeline takes no new files, keeps the
 * work that failed for want of the journal, and asks again on its own. A warning when it starts,
 * an error once it lasts past `errorAfterMs`, an info line when the journal answers again; then
 * intake resumes and the kept work runs. A SQLite journal never reports this code.
 */
import type { Clock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { JournalStore } from '../journal/index.js';

export const JOURNAL_UNAVAILABLE = 'DOCEX_JOURNAL_UNAVAILABLE';

export function isJournalUnavailable(err: unknown): boolean {
  return isDocexError(err, JOURNAL_UNAVAILABLE);
}

export interface JournalOutageOptions {
  journal: Pick<JournalStore, 'get' | 'location'>;
  clock: Clock;
  log: Logger;
  /** The outage began (true) or ended (false): intake pauses or resumes. */
  onChange: (down: boolean) => void;
  /** First wait between probes; it doubles up to maxProbeMs. */
  probeMs?: number;
  maxProbeMs?: number;
  /** An outage longer than this is logged as an error (once). */
  errorAfterMs?: number;
}

export class JournalOutage {
  private since: number | undefined;
  private probeDelay = 0;
  private timer: NodeJS.Timeout | undefined;
  private errorLogged = false;
  private readonly kept: Array<() => void> = [];

  constructor(private readonly options: JournalOutageOptions) {}

  get down(): boolean {
    return this.since !== undefined;
  }

  /** Steps kept until the journal answers. */
  get waiting(): number {
    return this.kept.length;
  }

  /**
   * `err` came from a step: true when it says the journal does not answer, and then `retry` runs
   * once the journal answers again (it was kept, not lost).
   */
  absorb(err: unknown, retry: () => void): boolean {
    if (!isJournalUnavailable(err)) return false;
    this.kept.push(retry);
    if (this.since !== undefined) return true;
    this.since = this.options.clock.now();
    this.errorLogged = false;
    this.probeDelay = this.options.probeMs ?? 1_000;
    this.options.log.warn(
      { journal: this.options.journal.location, reason: err instanceof Error ? err.message : String(err) },
      'journal not answering: no new files taken until it does',
    );
    this.options.onChange(true);
    this.schedule();
    return true;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.kept.length = 0;
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.probe(), this.probeDelay);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    this.timer = undefined;
    const since = this.since ?? this.options.clock.now();
    try {
      await this.options.journal.get(0);
    } catch (err) {
      const downMs = this.options.clock.now() - since;
      if (!this.errorLogged && downMs >= (this.options.errorAfterMs ?? 60_000)) {
        this.errorLogged = true;
        this.options.log.error(
          { journal: this.options.journal.location, downMs, code: JOURNAL_UNAVAILABLE, err },
          'journal still not answering: files wait',
        );
      }
      this.probeDelay = Math.min(this.probeDelay * 2, this.options.maxProbeMs ?? 10_000);
      if (this.since !== undefined) this.schedule();
      return;
    }
    if (this.since === undefined) return;
    this.since = undefined;
    this.options.log.info(
      {
        journal: this.options.journal.location,
        downMs: this.options.clock.now() - since,
        waiting: this.kept.length,
      },
      'journal answers again: intake resumed',
    );
    this.options.onChange(false);
    for (const retry of this.kept.splice(0)) retry();
  }
}
