/**
 * What the health and metrics endpoints read from the journal, on a connection of their own
 * (read-only, same process): totals of files taken, submitted and rejected and of jobs created,
 * and the upload windows still open. Never the upload URL column. The totals are summed from the
 * history, which only grows: each scrape reads only the entries added since the last one, in
 * chunks with a pause for the event loop between them, so a journal of millions of entries costs
 * one slow first scrape (spread out) and cheap ones after.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Database } from '../core/sqlite.js';
import type { SqlRow as Row } from '../core/sqlite-store.js';
import { UNFINISHED_STATES_SQL } from '../journal/states.js';

/** Totals since the journal was created, by folder. */
export interface JournalCounts {
  taken: Record<string, number>;
  /** Files the service has: uploaded, or (payload files) all their payload jobs finished. */
  submitted: Record<string, number>;
  /** By folder, then by DOCEX_ code. */
  rejected: Record<string, Record<string, number>>;
  /** Every job created (a job made again after its upload window counts again). */
  jobsCreated: Record<string, number>;
}

const CHUNK = 5_000;

export interface PendingUpload {
  itemId: number;
  folder: string;
  fileName: string;
  /** When the job was created (the window opened), epoch ms. */
  openedAt: number;
  /** When its upload URL stops working, epoch ms. */
  deadline: number;
}

/** Files claimed and not finished (done or rejected) yet, by folder and state. */
export interface WaitingFiles {
  folder: string;
  state: string;
  count: number;
  /** Claim time of the oldest of them, epoch ms. */
  oldestAt: number;
}

export class JournalReader {
  private readonly db: Database;
  private readonly statements;
  private cursor = 0;
  private totals: JournalCounts = { taken: {}, submitted: {}, rejected: {}, jobsCreated: {} };
  private reading: Promise<JournalCounts> | undefined;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    this.db.pragma('busy_timeout = 2000');
    this.statements = {
      history: this.db.prepare(
        `SELECT h.id, h.from_state, h.to_state, i.kind, i.folder, i.reject_code
         FROM history h JOIN items i ON i.id = h.item_id
         WHERE h.id > ? ORDER BY h.id LIMIT ${CHUNK}`,
      ),
      // Every state but the final ones, listed so the items_state index serves the query.
      waiting: this.db.prepare(
        `SELECT folder, state, count(*) AS n, min(created_at) AS oldest FROM items
         WHERE kind = 'file' AND state IN (${UNFINISHED_STATES_SQL})
         GROUP BY folder, state`,
      ),
      pending: this.db.prepare(
        `SELECT i.id, i.folder, i.file_name, i.upload_deadline,
           (SELECT max(h.at) FROM history h WHERE h.item_id = i.id AND h.to_state = 'created') AS opened_at
         FROM items i
         WHERE i.state = 'created' AND i.upload_deadline IS NOT NULL AND i.mode <> 'payload-word'
         ORDER BY i.upload_deadline`,
      ),
    };
  }

  /** The totals, brought up to date with the history entries added since the last call. */
  counts(): Promise<JournalCounts> {
    this.reading ??= this.catchUp().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async catchUp(): Promise<JournalCounts> {
    const t = this.totals;
    const add = (map: Record<string, number>, key: string) => {
      map[key] = (map[key] ?? 0) + 1;
    };
    for (;;) {
      const rows = this.statements.history.all(this.cursor) as Row[];
      for (const r of rows) {
        const folder = String(r['folder']);
        const from = r['from_state'];
        const to = r['to_state'];
        if (to === 'created') add(t.jobsCreated, folder);
        if (r['kind'] !== 'file') continue;
        if (from === null) add(t.taken, folder);
        if (to === 'uploaded' || (to === 'done' && from === 'validated')) add(t.submitted, folder);
        if (to === 'rejected') {
          const byCode = t.rejected[folder] ?? {};
          t.rejected[folder] = byCode;
          add(byCode, String(r['reject_code'] ?? 'unknown'));
        }
      }
      if (rows.length > 0) this.cursor = Number(rows[rows.length - 1]!['id']);
      if (rows.length < CHUNK) break;
      await yieldToLoop();
    }
    return structuredClone(t);
  }

  /** Jobs created whose upload is not confirmed yet, soonest deadline first. */
  pendingUploads(): PendingUpload[] {
    return (this.statements.pending.all() as Row[]).map((r) => {
      const deadline = Number(r['upload_deadline']);
      return {
        itemId: Number(r['id']),
        folder: String(r['folder']),
        fileName: String(r['file_name']),
        deadline,
        openedAt: r['opened_at'] === null ? deadline : Number(r['opened_at']),
      };
    });
  }

  /** Files not finished yet, by folder and state. */
  waiting(): WaitingFiles[] {
    return (this.statements.waiting.all() as Row[]).map((r) => ({
      folder: String(r['folder']),
      state: String(r['state']),
      count: Number(r['n']),
      oldestAt: Number(r['oldest']),
    }));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
