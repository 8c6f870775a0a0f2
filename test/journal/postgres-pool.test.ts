/**
 * PgSession's transactions with a BEGIN or a COMMIT that carries statements of its own (one round
 * trip each, the simple query protocol): the rows of the BEGIN's statements are handed over, and
 * a COMMIT whose statement fails rolls back and leaves the one pooled client usable.
 */
import { beforeEach, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import { PgSession, postgresConnection } from '../../src/journal/postgres/pool.js';
import { describePostgres, testDatabase } from '../support/postgres.js';

describePostgres('PgSession transactions with statements in their BEGIN or COMMIT', () => {
  let session: PgSession;

  beforeEach(async () => {
    // One client: whatever a transaction leaves on it, the next one meets.
    session = PgSession.open(postgresConnection(await testDatabase()), { max: 1 });
    await session.rows('set up', { text: 'CREATE TABLE t (n integer PRIMARY KEY CHECK (n < 100))' });
    return () => session.end();
  });

  it('runs its transactions READ COMMITTED on a database whose default isolation is stricter', async () => {
    const url = await testDatabase();
    const admin = PgSession.open(postgresConnection(url), { max: 1 });
    const database = new URL(url).pathname.slice(1);
    await admin.rows('set up', {
      text: `ALTER DATABASE "${database}" SET default_transaction_isolation = 'repeatable read'`,
    });
    await admin.end();
    const strict = PgSession.open(postgresConnection(url), { max: 1 });
    try {
      const begun = await strict.transaction(
        'read',
        async (_tx, rows) => rows,
        "BEGIN; SELECT current_setting('transaction_isolation') AS isolation",
      );
      expect(begun[1]).toEqual([{ isolation: 'read committed' }]);
    } finally {
      await strict.end();
    }
  });

  it('commits synchronously unless its role lets commits answer before the disk', async () => {
    const url = await testDatabase();
    const setting = async (unsyncedCommits: boolean) => {
      const writer = PgSession.open(postgresConnection(url), { max: 1, unsyncedCommits });
      try {
        return (await writer.one('read', { text: 'SHOW synchronous_commit' }))?.['synchronous_commit'];
      } finally {
        await writer.end();
      }
    };
    expect(await setting(false)).toBe('on');
    expect(await setting(true)).toBe('off');
  });

  it('hands the function the rows of each statement of its BEGIN', async () => {
    const begun = await session.transaction(
      'read',
      async (_tx, rows) => rows,
      'BEGIN; SELECT 1 AS one; SELECT 2 AS two UNION ALL SELECT 3',
    );
    expect(begun).toEqual([[], [{ one: 1 }], [{ two: 2 }, { two: 3 }]]);
  });

  it('commits the statements of its COMMIT with the transaction, given what the function resolved to', async () => {
    await session.transaction(
      'insert',
      async (tx) => {
        await tx.rows({ text: 'INSERT INTO t VALUES (1)' });
        return 2;
      },
      'BEGIN',
      (n) => `INSERT INTO t VALUES (${n}); COMMIT`,
    );
    expect(await session.rows('read', { text: 'SELECT n FROM t ORDER BY n' })).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('rolls back when a statement of its COMMIT fails, and the client is usable after', async () => {
    const failed = await session
      .transaction(
        'insert',
        async (tx) => {
          await tx.rows({ text: 'INSERT INTO t VALUES (1)' });
        },
        'BEGIN',
        () => 'INSERT INTO t VALUES (500); COMMIT',
      )
      .catch((err: unknown) => err);
    expect(isDocexError(failed)).toBe(true);
    // Not committed, and the one client is out of its aborted transaction.
    expect(await session.rows('read', { text: 'SELECT n FROM t' })).toEqual([]);
    await session.transaction('again', async (tx) => tx.rows({ text: 'INSERT INTO t VALUES (3)' }));
    expect(await session.rows('read', { text: 'SELECT n FROM t' })).toEqual([{ n: 3 }]);
  });
});
