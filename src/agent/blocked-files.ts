/**
 * One error line per file that has waited past a threshold without finishing (claimed, and not
 * done or refused an hour later: the service down, an upload that keeps failing), so an outage
 * that blocks files reaches `journalctl -p err` once per file rather than as a retry per attempt.
 * Reads the journal on a read-only connection of its own every few minutes (an unref'd timer).
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { Database } from '../core/sqlite.js';
import { UNFINISHED_STATES_SQL } from '../journal/states.js';

export const BLOCKED_AFTER_MS = 3_600_000;
const CHECK_EVERY_MS = 5 * 60_000;
/** Items remembered as reported; a restart may report a still-blocked file once more. */
const MAX_REPORTED = 10_000;

export interface BlockedFilesOptions {
  journalFile: string;
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
    this.timer = setInterval(() => this.check(), this.options.checkEveryMs ?? CHECK_EVERY_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Logs each file newly past the threshold; answers how many it logged. */
  check(): number {
    const cutoff = this.options.clock.now() - (this.options.blockedAfterMs ?? BLOCKED_AFTER_MS);
    let rows: {
      id: number;
      folder: string;
      file_name: string;
      state: string;
      created_at: number;
      job_id: string | null;
    }[];
    try {
      const db = new Database(this.options.journalFile, { readonly: true, fileMustExist: true });
      try {
        rows = db
          .prepare(
            `SELECT id, folder, file_name, state, created_at, job_id FROM items
             WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL}) AND created_at <= ? ORDER BY id LIMIT 100`,
          )
          .all(cutoff) as typeof rows;
      } finally {
        db.close();
      }
    } catch (err) {
      this.options.log.warn({ err }, 'blocked-file check could not read the journal');
      return 0;
    }
    let logged = 0;
    for (const r of rows) {
      if (this.reported.has(r.id)) continue;
      if (this.reported.size >= MAX_REPORTED) this.reported.clear();
      this.reported.add(r.id);
      logged++;
      this.options.log.error(
        {
          code: 'DOCEX_FILE_BLOCKED',
          folder: r.folder,
          file: r.file_name,
          state: r.state,
          ...(r.job_id ? { jobId: r.job_id } : {}),
          waitingForMs: this.options.clock.now() - r.created_at,
        },
        'file blocked: not finished long after it was claimed',
      );
    }
    return logged;
  }
}
