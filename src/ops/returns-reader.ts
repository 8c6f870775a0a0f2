/**
 * What the metrics read of the return path's own store (`<stateDir>/returns.sqlite`), read-only:
 * proof documents written to the proofs output. Opened at the first read, so an agent whose
 * return path is off (no file) costs nothing; a missing or unreadable store reads as nothing.
 */
import { existsSync } from 'node:fs';
import { Database } from '../core/sqlite.js';

export class ReturnsReader {
  private db: Database | undefined;

  constructor(private readonly file: string) {}

  /** Proof documents written (state done); undefined while the store does not exist. */
  proofsArchived(): number | undefined {
    const db = this.open();
    if (!db) return undefined;
    try {
      const row = db.prepare(`SELECT count(*) AS n FROM documents WHERE state = 'done'`).get() as {
        n: number;
      };
      return row.n;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.db?.open) this.db.close();
    this.db = undefined;
  }

  private open(): Database | undefined {
    if (this.db) return this.db;
    if (!existsSync(this.file)) return undefined;
    try {
      this.db = new Database(this.file, { readonly: true, fileMustExist: true });
      this.db.pragma('busy_timeout = 2000');
    } catch {
      this.db = undefined;
    }
    return this.db;
  }
}
