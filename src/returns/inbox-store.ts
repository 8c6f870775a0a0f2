/**
 * The inbound side's store, whichever database keeps it: which incoming Peppol documents are
 * saved, the high-water mark of the Peppol poll, and the webhook ids already handled. Two
 * implementations: SqliteInboxStore (`<stateDir>/inbox.sqlite`, the default) and
 * PostgresInboxStore (the journal's database); only open-stores.ts names them.
 */

/** The SQLite store's file name in the state folder. */
export const INBOX_FILE = 'inbox.sqlite';

export interface InboxStore {
  /** Where the store is, for logs and messages: a file path, or a URL without its password. */
  readonly location: string;
  isSaved(id: string): Promise<boolean>;
  /** Recorded only after both files are written: a crash before this rewrites them, same names. */
  markSaved(doc: { id: string; createdAt: number; stem: string }): Promise<void>;
  savedCount(): Promise<number>;
  /** createdAt (epoch ms) of the newest document below which every listed one is saved. */
  highWaterMark(): Promise<number | undefined>;
  /** Moves the mark forward only; saved ids far enough behind it are forgotten in the same transaction. */
  advanceHighWaterMark(at: number, keepBehindMs: number): Promise<void>;
  /** Whether a webhook id is remembered (a read: rememberWebhook records it). */
  webhookSeen(id: string): Promise<boolean>;
  /**
   * True the first time a webhook id is seen; a repeat answers false (already handled). Race-free:
   * of concurrent calls with one id, exactly one answers true.
   */
  rememberWebhook(id: string, eventType: string | undefined, keepMs: number): Promise<boolean>;
  close(): Promise<void>;
}
