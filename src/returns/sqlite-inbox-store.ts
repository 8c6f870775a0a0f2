/**
 * The inbound side's own SQLite file (`<stateDir>/inbox.sqlite`, WAL, mode 0600), the default
 * backend of the InboxStore contract (inbox-store.ts): which incoming Peppol documents are saved,
 * the high-water mark of the Peppol poll, and the webhook ids already handled. Separate from the
 * intake journal so the two parts never share a schema. Versioned like the journal: each migration
 * once, in order; a file from a newer agent is refused. Statements run synchronously inside each
 * method; the methods answer resolved promises.
 */
import type { Clock } from '../core/clock.js';
import type { Database } from '../core/sqlite.js';
import {
  latestVersion,
  type Migration,
  migrate,
  NIGHTLY_STORE_CACHE_KIB,
  openDatabase,
} from '../core/sqlite-store.js';
import { INBOX_FILE, type InboxStore } from './inbox-store.js';

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE peppol_saved (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        saved_at INTEGER NOT NULL,
        file_stem TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX peppol_saved_created ON peppol_saved (created_at);
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE webhook_seen (
        id TEXT PRIMARY KEY,
        event_type TEXT,
        received_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX webhook_seen_received ON webhook_seen (received_at);
    `,
  },
];

export const INBOX_SCHEMA_VERSION = latestVersion(MIGRATIONS);
const HWM_KEY = 'peppol.highWaterMark';

export class SqliteInboxStore implements InboxStore {
  private readonly stmts;
  private lastWebhookPrune = 0;

  private constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly location: string,
  ) {
    this.stmts = {
      isSaved: db.prepare('SELECT 1 FROM peppol_saved WHERE id = ?').pluck(),
      save: db.prepare(
        'INSERT OR IGNORE INTO peppol_saved (id, created_at, saved_at, file_stem) VALUES (?, ?, ?, ?)',
      ),
      savedCount: db.prepare('SELECT count(*) FROM peppol_saved').pluck(),
      pruneSaved: db.prepare('DELETE FROM peppol_saved WHERE created_at < ?'),
      getMeta: db.prepare('SELECT value FROM meta WHERE key = ?').pluck(),
      setMeta: db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      seeWebhook: db.prepare(
        'INSERT OR IGNORE INTO webhook_seen (id, event_type, received_at) VALUES (?, ?, ?)',
      ),
      pruneWebhooks: db.prepare('DELETE FROM webhook_seen WHERE received_at < ?'),
      webhookSeen: db.prepare('SELECT 1 FROM webhook_seen WHERE id = ?').pluck(),
    };
  }

  static open(file: string, clock: Clock): SqliteInboxStore {
    // NORMAL, not FULL: a power cut may forget the last few records, which only means a document
    // written again under the same names or a webhook nudge repeated; a killed process loses nothing.
    const db = openDatabase(file, { synchronous: 'NORMAL', cacheKiB: NIGHTLY_STORE_CACHE_KIB });
    try {
      migrate(db, MIGRATIONS, { now: clock.now(), newerCode: 'DOCEX_INBOX_VERSION', what: INBOX_FILE });
      return new SqliteInboxStore(db, clock, file);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  async isSaved(id: string): Promise<boolean> {
    return this.stmts.isSaved.get(id) !== undefined;
  }

  async markSaved(doc: { id: string; createdAt: number; stem: string }): Promise<void> {
    this.stmts.save.run(doc.id, doc.createdAt, this.clock.now(), doc.stem);
  }

  async savedCount(): Promise<number> {
    return this.stmts.savedCount.get() as number;
  }

  async highWaterMark(): Promise<number | undefined> {
    return this.mark();
  }

  private mark(): number | undefined {
    const v = this.stmts.getMeta.get(HWM_KEY) as string | undefined;
    return v === undefined ? undefined : Number(v);
  }

  async advanceHighWaterMark(at: number, keepBehindMs: number): Promise<void> {
    this.db.transaction(() => {
      const current = this.mark();
      if (current !== undefined && at <= current) return;
      this.stmts.setMeta.run(HWM_KEY, String(at));
      this.stmts.pruneSaved.run(at - keepBehindMs);
    })();
  }

  async webhookSeen(id: string): Promise<boolean> {
    return this.stmts.webhookSeen.get(id) !== undefined;
  }

  async rememberWebhook(id: string, eventType: string | undefined, keepMs: number): Promise<boolean> {
    const now = this.clock.now();
    const fresh = this.stmts.seeWebhook.run(id, eventType ?? null, now).changes === 1;
    // Old ids go at most once an hour: a replay that old fails the timestamp check anyway.
    if (fresh && now - this.lastWebhookPrune >= 3_600_000) {
      this.stmts.pruneWebhooks.run(now - keepMs);
      this.lastWebhookPrune = now;
    }
    return fresh;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
