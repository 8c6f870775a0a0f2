/**
 * Which jobs to follow: the intake journal's items that reached `done` with a job (a file that is
 * its own job, or one payload row of a file), read through a read-only connection in the order
 * their `done` was recorded (history ids grow with every commit, so an item finished late is never
 * skipped, as an item-id cursor would). The journal stays the intake's alone.
 */
import { cachePrepared, Database } from '../core/sqlite.js';
import { opt, type SqlRow as Row } from '../core/sqlite-store.js';

export interface DoneJobItem {
  /** The history entry's id: the feed's cursor. */
  cursor: number;
  itemId: number;
  rowIndex: number | undefined;
  label: string | undefined;
  jobId: string;
  jobName: string | undefined;
  doneAt: number;
  /** The dropped file the job came from (the item itself, or the row's file). */
  source: { itemId: number; folder: string; fileName: string; sha256: string; claimedAt: number };
}

export class JournalFeed {
  private readonly db: Database;

  constructor(journalFile: string) {
    this.db = cachePrepared(new Database(journalFile, { readonly: true, fileMustExist: true }));
    this.db.pragma('busy_timeout = 5000');
  }

  /** Up to `limit` done job items recorded after `cursor`. */
  after(cursor: number, limit = 500): DoneJobItem[] {
    const rows = this.db
      .prepare(
        `SELECT h.id AS hid, h.at AS done_at, i.id, i.kind, i.parent_id, i.row_index, i.folder, i.file_name,
           i.sha256, i.job_id, i.job_name, i.label, i.created_at,
           p.folder AS p_folder, p.file_name AS p_file_name, p.sha256 AS p_sha256, p.created_at AS p_created_at
         FROM history h JOIN items i ON i.id = h.item_id LEFT JOIN items p ON p.id = i.parent_id
         WHERE h.id > ? AND h.to_state = 'done' AND i.job_id IS NOT NULL
         ORDER BY h.id LIMIT ?`,
      )
      .all(cursor, limit) as Row[];
    return rows.map((r) => {
      const isRow = r['kind'] === 'row' && r['parent_id'] !== null;
      return {
        cursor: r['hid'] as number,
        itemId: r['id'] as number,
        rowIndex: opt(r['row_index']),
        label: opt(r['label']),
        jobId: r['job_id'] as string,
        jobName: opt(r['job_name']),
        doneAt: r['done_at'] as number,
        source: isRow
          ? {
              itemId: r['parent_id'] as number,
              folder: r['p_folder'] as string,
              fileName: r['p_file_name'] as string,
              sha256: r['p_sha256'] as string,
              claimedAt: r['p_created_at'] as number,
            }
          : {
              itemId: r['id'] as number,
              folder: r['folder'] as string,
              fileName: r['file_name'] as string,
              sha256: r['sha256'] as string,
              claimedAt: r['created_at'] as number,
            },
      };
    });
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
