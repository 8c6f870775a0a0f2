/**
 * The return path's stores in PostgreSQL. Imported on its own, by open-stores.ts only when the
 * journal is in PostgreSQL, so an agent whose stores are SQLite files never loads pg.
 */
export { PostgresInboxStore } from './inbox-store.js';
export { PostgresReturnsReader } from './reader.js';
export { PostgresReturnsStore } from './returns-store.js';
export { INBOX_COMPONENT, RETURNS_COMPONENT } from './schema.js';
