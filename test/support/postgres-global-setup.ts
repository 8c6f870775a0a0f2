/**
 * vitest globalSetup: one PostgreSQL server for the whole test run (see postgres.ts), its address
 * handed to the test files as `inject('docexPostgres')`; `testDatabase()` makes a fresh database on
 * it per call. Without PostgreSQL it does nothing (the suites that need it skip or, under
 * DOCEX_REQUIRE_POSTGRES=1, fail on their own). A server that fails to start fails only the tests
 * that ask for a database (`docexPostgresError`), not the unrelated rest of the run.
 */
import type { TestProject } from 'vitest/node';
import { postgresAvailable, startPostgresServer, type TestPostgresServer } from './postgres.js';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!postgresAvailable) return undefined;
  let server: TestPostgresServer;
  try {
    server = await startPostgresServer();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    console.error(`[postgres-global-setup] the shared PostgreSQL server did not start: ${message}`);
    project.provide('docexPostgresError', message);
    return undefined;
  }
  project.provide('docexPostgres', { host: server.host, port: server.port, superuser: server.superuser });
  return () => server.destroy();
}
