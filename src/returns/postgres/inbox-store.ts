/**
 * The InboxStore (../inbox-store.ts) in the journal's PostgreSQL database: the inbox_* tables of
 * schema.ts on a small pool of its own (two connections at most: a poll pass and the webhook
 * receiver). A webhook id is remembered with one INSERT … ON CONFLICT DO NOTHING: of concurrent
 * deliveries of one id, on this agent or another, exactly one is told it is new. The Peppol mark
 * moves forward only, and the saved ids behind it go, in one statement.
 */
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { PostgresConnection } from '../../journal/location.js';
import { PgSession, type Statement } from '../../journal/postgres/pool.js';
import type { InboxStore } from '../inbox-store.js';
import { INBOX_COMPONENT, migrateComponent } from './schema.js';

const HWM_KEY = 'peppol.highWaterMark';
/** Old webhook ids go at most once an hour: a replay that old fails the timestamp check anyway. */
const WEBHOOK_PRUNE_EVERY_MS = 3_600_000;

const q = (name: string, text: string): Statement => ({ name: `inbox-${name}`, text });

const S = {
  isSaved: q('is-saved', 'SELECT 1 FROM inbox_peppol_saved WHERE id = $1'),
  save: q(
    'save',
    `INSERT INTO inbox_peppol_saved (id, created_at, saved_at, file_stem) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO NOTHING`,
  ),
  savedCount: q('saved-count', 'SELECT count(*) AS n FROM inbox_peppol_saved'),
  getMeta: q('get-meta', 'SELECT value FROM inbox_meta WHERE key = $1'),
  // The mark only grows (compared as numbers); when it moved, the saved ids behind it go with it.
  advance: q(
    'advance',
    `WITH moved AS (
       INSERT INTO inbox_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
         WHERE inbox_meta.value::bigint < EXCLUDED.value::bigint
       RETURNING 1
     )
     DELETE FROM inbox_peppol_saved WHERE created_at < $3 AND EXISTS (SELECT 1 FROM moved)`,
  ),
  seeWebhook: q(
    'see-webhook',
    `INSERT INTO inbox_webhook_seen (id, event_type, received_at) VALUES ($1, $2, $3)
     ON CONFLICT (id) DO NOTHING RETURNING 1 AS fresh`,
  ),
  pruneWebhooks: q('prune-webhooks', 'DELETE FROM inbox_webhook_seen WHERE received_at < $1'),
  webhookSeen: q('webhook-seen', 'SELECT 1 FROM inbox_webhook_seen WHERE id = $1'),
};

export class PostgresInboxStore implements InboxStore {
  readonly location: string;
  private lastWebhookPrune = 0;

  private constructor(
    private readonly session: PgSession,
    private readonly clock: Clock,
    private readonly log: Logger | undefined,
  ) {
    this.location = session.location;
  }

  static async open(connection: PostgresConnection, clock: Clock, log?: Logger): Promise<PostgresInboxStore> {
    const session = PgSession.open(connection, { max: Math.min(2, connection.poolSize) }, log);
    try {
      await migrateComponent(session, INBOX_COMPONENT, clock.now());
      return new PostgresInboxStore(session, clock, log);
    } catch (err) {
      await session.end();
      throw err;
    }
  }

  private rows(doing: string, statement: Statement, values?: readonly unknown[]) {
    return this.session.rows(`inbox: ${doing}`, statement, values);
  }

  async isSaved(id: string): Promise<boolean> {
    return (await this.rows('isSaved', S.isSaved, [id])).length > 0;
  }

  async markSaved(doc: { id: string; createdAt: number; stem: string }): Promise<void> {
    await this.rows('markSaved', S.save, [doc.id, doc.createdAt, this.clock.now(), doc.stem]);
  }

  async savedCount(): Promise<number> {
    return Number((await this.rows('savedCount', S.savedCount))[0]?.['n'] ?? 0);
  }

  async highWaterMark(): Promise<number | undefined> {
    const value = (await this.rows('highWaterMark', S.getMeta, [HWM_KEY]))[0]?.['value'];
    return typeof value === 'string' ? Number(value) : undefined;
  }

  async advanceHighWaterMark(at: number, keepBehindMs: number): Promise<void> {
    await this.rows('advanceHighWaterMark', S.advance, [HWM_KEY, String(at), at - keepBehindMs]);
  }

  async webhookSeen(id: string): Promise<boolean> {
    return (await this.rows('webhookSeen', S.webhookSeen, [id])).length > 0;
  }

  async rememberWebhook(id: string, eventType: string | undefined, keepMs: number): Promise<boolean> {
    const now = this.clock.now();
    const fresh =
      (await this.rows('rememberWebhook', S.seeWebhook, [id, eventType ?? null, now])).length === 1;
    if (fresh && now - this.lastWebhookPrune >= WEBHOOK_PRUNE_EVERY_MS) {
      // The id is recorded: a failed prune must not make the delivery fail (it would come again).
      try {
        await this.rows('pruneWebhooks', S.pruneWebhooks, [now - keepMs]);
        this.lastWebhookPrune = now;
      } catch (err) {
        this.log?.warn({ err }, 'old webhook ids not pruned; tried again later');
      }
    }
    return fresh;
  }

  close(): Promise<void> {
    return this.session.end();
  }
}
