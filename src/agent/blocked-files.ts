/**
 * One error line per file that has waited past a threshold without finishing (claimed, and not
 * done or rejected an hour later: the service down, an upload that keeps failing), so an outage
 * that blocks files reaches `journalctl -p err` once per file rather than as a retry per attempt.
 * Reads the journal through its read API, on a read-only connection opened for each check every
 * few minutes (an unref'd timer).
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { type JournalLocation, openJournalReader, type UnfinishedFile } from '../journal/index.js';

export const BLOCKED_AFTER_MS = 3_600_000;
const CHECK_EVERY_MS = 5 * 60_000;
/** Items remembered as reported; a restart may report a still-blocked file once more. */
const MAX_REPORTED = 10_000;

export interface BlockedFilesOptions {
  journal: JournalLocation;
  clock: Clock;
  log: Logger;
  blockedAfterMs?: number;
  checkEveryMs?: number;
}

export class BlockedFiles {
  private timer: NodeJS.Timeout | undefined;
  private readonly reported = new Set<number>();

  constructor(private readonly options: BlockedFilesOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs ?? CHECK_EVERY_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Logs each file newly past the threshold; answers how many it logged. */
  async check(): Promise<number> {
    const cutoff = this.options.clock.now() - (this.options.blockedAfterMs ?? BLOCKED_AFTER_MS);
    let files: UnfinishedFile[];
    try {
      const journal = await openJournalReader(this.options.journal, { busyTimeoutMs: 5000 });
      try {
        files = await journal.unfinishedSince(cutoff, 100);
      } finally {
        await journal.close();
      }
    } catch (err) {
      this.options.log.warn({ err }, 'blocked-file check could not read the journal');
      return 0;
    }
    let logged = 0;
    for (const file of files) {
      if (this.reported.has(file.id)) continue;
      if (this.reported.size >= MAX_REPORTED) this.reported.clear();
      this.reported.add(file.id);
      logged++;
      this.options.log.error(
        {
          code: 'DOCEX_FILE_BLOCKED',
          folder: file.folder,
          file: file.fileName,
          state: file.state,
          ...(file.jobId ? { jobId: file.jobId } : {}),
          ...(file.owner ? { owner: file.owner } : {}),
          waitingForMs: this.options.clock.now() - file.claimedAt,
        },
        'file blocked: not finished long after it was claimed',
      );
    }
    return logged;
  }
}
