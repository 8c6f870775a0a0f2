import { Database } from '../core/sqlite.js';

/**
 * The sandbox's state: one SQLite file of JSON records, so a restart keeps jobs, events and
 * webhooks. Records of one kind are ordered by insertion (`seq`), which is the order lists answer
 * in (ascending startDate, since records are created in time order). `companyId` and `parentId`
 * are indexed so per-company and per-job lists stay fast at 10,000s of records.
 */
export interface StoredRecord {
  id: string;
  [key: string]: unknown;
}

export interface ListFilter {
  companyId?: string;
  parentId?: string;
}

export interface PageQuery extends ListFilter {
  after?: string;
  maxItems: number;
  where?: (record: StoredRecord) => boolean;
}

export class Store {
  private readonly db: Database;
  private readonly stmts;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS records (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        company_id TEXT,
        parent_id TEXT,
        json TEXT NOT NULL,
        UNIQUE (kind, id)
      );
      CREATE INDEX IF NOT EXISTS records_company ON records (kind, company_id, seq);
      CREATE INDEX IF NOT EXISTS records_parent ON records (kind, parent_id, seq);
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
    this.stmts = {
      insert: this.db.prepare(
        'INSERT INTO records (kind, id, company_id, parent_id, json) VALUES (@kind, @id, @companyId, @parentId, @json)',
      ),
      update: this.db.prepare('UPDATE records SET json = @json WHERE kind = @kind AND id = @id'),
      get: this.db.prepare('SELECT json FROM records WHERE kind = ? AND id = ?'),
      seqOf: this.db.prepare('SELECT seq FROM records WHERE kind = ? AND id = ?'),
      delete: this.db.prepare('DELETE FROM records WHERE kind = ? AND id = ?'),
      all: this.db.prepare('SELECT seq, json FROM records WHERE kind = ? AND seq > ? ORDER BY seq'),
      byCompany: this.db.prepare(
        'SELECT seq, json FROM records WHERE kind = ? AND company_id = ? AND seq > ? ORDER BY seq',
      ),
      byParent: this.db.prepare(
        'SELECT seq, json FROM records WHERE kind = ? AND parent_id = ? AND seq > ? ORDER BY seq',
      ),
      count: this.db.prepare('SELECT count(*) AS n FROM records WHERE kind = ?'),
      countByCompany: this.db.prepare('SELECT count(*) AS n FROM records WHERE kind = ? AND company_id = ?'),
      countByParent: this.db.prepare('SELECT count(*) AS n FROM records WHERE kind = ? AND parent_id = ?'),
      // Both filters: iterate() checks the record's own companyId, so the count does too.
      countByParentAndCompany: this.db.prepare(
        "SELECT count(*) AS n FROM records WHERE kind = ? AND parent_id = ? AND json_extract(json, '$.companyId') = ?",
      ),
      getMeta: this.db.prepare('SELECT value FROM meta WHERE key = ?'),
      setMeta: this.db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
    };
  }

  insert<T extends StoredRecord>(kind: string, record: T, index: ListFilter = {}): T {
    this.stmts.insert.run({
      kind,
      id: record.id,
      companyId: index.companyId ?? null,
      parentId: index.parentId ?? null,
      json: JSON.stringify(record),
    });
    return record;
  }

  /** Replaces the stored record (the indexed columns keep their values). */
  put<T extends StoredRecord>(kind: string, record: T): T {
    this.stmts.update.run({ kind, id: record.id, json: JSON.stringify(record) });
    return record;
  }

  get<T extends StoredRecord = StoredRecord>(kind: string, id: string): T | undefined {
    const row = this.stmts.get.get(kind, id) as { json: string } | undefined;
    return row ? (JSON.parse(row.json) as T) : undefined;
  }

  delete(kind: string, id: string): boolean {
    return this.stmts.delete.run(kind, id).changes > 0;
  }

  count(kind: string): number {
    return (this.stmts.count.get(kind) as { n: number }).n;
  }

  /** All records of a kind, oldest first, lazily. */
  *iterate<T extends StoredRecord = StoredRecord>(
    kind: string,
    filter: ListFilter = {},
    afterSeq = 0,
  ): Generator<T> {
    for (const row of this.rows<T>(kind, filter, afterSeq)) yield row.record;
  }

  private countMatching(kind: string, filter: ListFilter): number {
    const row =
      filter.parentId !== undefined && filter.companyId !== undefined
        ? this.stmts.countByParentAndCompany.get(kind, filter.parentId, filter.companyId)
        : filter.parentId !== undefined
          ? this.stmts.countByParent.get(kind, filter.parentId)
          : filter.companyId !== undefined
            ? this.stmts.countByCompany.get(kind, filter.companyId)
            : this.stmts.count.get(kind);
    return (row as { n: number }).n;
  }

  private *rows<T extends StoredRecord>(
    kind: string,
    filter: ListFilter,
    afterSeq: number,
  ): Generator<{ seq: number; record: T }> {
    const rows =
      filter.parentId !== undefined
        ? this.stmts.byParent.iterate(kind, filter.parentId, afterSeq)
        : filter.companyId !== undefined
          ? this.stmts.byCompany.iterate(kind, filter.companyId, afterSeq)
          : this.stmts.all.iterate(kind, afterSeq);
    for (const row of rows as Iterable<{ seq: number; json: string }>) {
      const record = JSON.parse(row.json) as T;
      if (
        filter.companyId !== undefined &&
        filter.parentId !== undefined &&
        record['companyId'] !== filter.companyId
      ) {
        continue;
      }
      yield { seq: row.seq, record };
    }
  }

  list<T extends StoredRecord = StoredRecord>(kind: string, filter: ListFilter = {}): T[] {
    return [...this.iterate<T>(kind, filter)];
  }

  /**
   * One page after the record `after` (an id). Returns undefined when `after` names no record of
   * this kind, which the routes answer with 400.
   */
  page<T extends StoredRecord = StoredRecord>(
    kind: string,
    query: PageQuery,
  ): { items: T[]; totalItems: number } | undefined {
    let afterSeq = 0;
    if (query.after !== undefined) {
      const row = this.stmts.seqOf.get(kind, query.after) as { seq: number } | undefined;
      if (!row) return undefined;
      afterSeq = row.seq;
    }
    const items: T[] = [];
    const where = query.where;
    if (!where) {
      for (const record of this.iterate<T>(kind, query, afterSeq)) {
        items.push(record);
        if (items.length >= query.maxItems) break;
      }
      return { items, totalItems: this.countMatching(kind, query) };
    }
    // A predicate needs every record parsed: count and collect the page in the same pass.
    let totalItems = 0;
    for (const { seq, record } of this.rows<T>(kind, query, 0)) {
      if (!where(record)) continue;
      totalItems++;
      if (seq > afterSeq && items.length < query.maxItems) items.push(record);
    }
    return { items, totalItems };
  }

  transaction<R>(fn: () => R): R {
    return this.db.transaction(fn)();
  }

  getMeta(key: string): string | undefined {
    return (this.stmts.getMeta.get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.stmts.setMeta.run(key, value);
  }

  close(): void {
    this.db.close();
  }
}
