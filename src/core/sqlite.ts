/**
 * The SQLite driver: better-sqlite3 13, a Node-API addon with prebuilt binaries (no compiler at
 * install), for Node 22+. Every store imports it from here, so the driver is named once.
 */
import BetterSqlite3 from 'better-sqlite3';

export const Database = BetterSqlite3;
export type Database = BetterSqlite3.Database;

/**
 * Makes `db.prepare` answer one statement per SQL text, compiled once. A store that prepares its
 * statements where it runs them (every poll of an idle loop) would otherwise compile the same SQL
 * again each time: CPU and garbage an idle agent pays every few seconds. Safe for statements run
 * with all/get/run; a statement left iterating must not be prepared again while it iterates.
 */
export function cachePrepared(db: Database): Database {
  const compile = db.prepare.bind(db);
  const cache = new Map<string, ReturnType<Database['prepare']>>();
  db.prepare = ((sql: string) => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = compile(sql);
      cache.set(sql, statement);
    }
    return statement;
  }) as Database['prepare'];
  return db;
}
