/**
 * The SQLite driver: better-sqlite3 13, a Node-API addon with prebuilt binaries (no compiler at
 * install), for Node 22+. Every store imports it from here, so the driver is named once.
 */
import BetterSqlite3 from 'better-sqlite3';

export const Database = BetterSqlite3;
export type Database = BetterSqlite3.Database;
