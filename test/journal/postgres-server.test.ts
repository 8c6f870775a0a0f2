import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  describePostgres,
  startPostgresServer,
  type TestPostgresServer,
  testDatabase,
} from '../support/postgres.js';

/** A connected client; its 'error' events (a server going away) are kept, not thrown. */
async function connect(url: string): Promise<pg.Client & { errors: Error[] }> {
  const client = Object.assign(new pg.Client({ connectionString: url }), { errors: [] as Error[] });
  client.on('error', (err) => client.errors.push(err));
  await client.connect();
  return client;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connect(url);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function tableNames(url: string): Promise<string[]> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    );
    return rows.map((r) => r.name);
  });
}

describePostgres('the shared PostgreSQL test server (global setup)', () => {
  it('gives a database URL that accepts a pg connection and answers SELECT 1', async () => {
    const url = await testDatabase();
    expect(url).toMatch(/^postgres:\/\/[^@]+@127\.0\.0\.1:\d+\/docex_t_/);
    const { rows } = await withClient(url, (c) => c.query<{ one: number }>('SELECT 1 AS one'));
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('gives a fresh, empty database per call: a table made in one is absent from the other', async () => {
    const first = await testDatabase();
    const second = await testDatabase();
    expect(second).not.toBe(first);
    expect(await tableNames(first)).toEqual([]);
    await withClient(first, (c) => c.query('CREATE TABLE only_in_first (id int PRIMARY KEY)'));
    expect(await tableNames(first)).toEqual(['only_in_first']);
    expect(await tableNames(second)).toEqual([]);
  });
});

describePostgres('a private PostgreSQL server (startPostgresServer)', () => {
  let server: TestPostgresServer;
  let url: string;

  beforeAll(async () => {
    server = await startPostgresServer();
    url = await server.createDatabase();
    await withClient(url, (c) => c.query("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before')"));
  });
  afterAll(async () => {
    await server?.destroy();
  });

  const rows = () =>
    withClient(url, async (c) => (await c.query<{ v: string }>('SELECT v FROM kept ORDER BY v')).rows);

  it('listens on 127.0.0.1 only and keeps its data and its port across restart()', async () => {
    const port = server.port;
    await server.restart();
    expect(server.port).toBe(port);
    expect(await rows()).toEqual([{ v: 'before' }]);
    const listen = await withClient(url, (c) =>
      c.query<{ listen_addresses: string }>('SHOW listen_addresses'),
    );
    expect(listen.rows[0]?.listen_addresses).toBe('127.0.0.1');
  });

  it('while killed, an open connection sees an error and a new one is refused; after start() a new connection works and committed rows are kept', async () => {
    const open = await connect(url);
    const dropped = new Promise<Error>((resolve) => open.once('error', resolve));
    await withClient(url, (c) => c.query("INSERT INTO kept VALUES ('committed before kill')"));

    await server.kill();
    await dropped; // no sleep: the error event is the signal
    expect(open.errors.length).toBeGreaterThan(0);
    await expect(open.query('SELECT 1')).rejects.toThrow();
    await open.end().catch(() => {});
    await expect(connect(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await server.start();
    expect(await rows()).toEqual([{ v: 'before' }, { v: 'committed before kill' }]);
  });
});
