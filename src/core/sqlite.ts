/**
 * The SQLite driver. better-sqlite3 12 is a node::ObjectWrap addon: on Node 24 a collected
 * statement can abort the process (`Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook). better-sqlite3 13 is a Node-API addon without that fault, but
 * needs Node 22+. So Node 22+ loads 13 (installed under the alias `better-sqlite3-napi`), Node 20
 * keeps 12. Both have the same JavaScript API.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** Which package provides the driver on this Node. */
export const SQLITE_DRIVER = NODE_MAJOR >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

export const Database = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
export type Database = BetterSqlite3.Database;
