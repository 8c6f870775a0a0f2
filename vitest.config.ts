import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Room for a loaded 2-core machine running the whole suite: a bound that fails only when the
    // machine is slow is a flaky test, and a test that hangs still fails, only later.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Sandboxes and SQLite files are per test file; forks keep native modules isolated.
    pool: 'forks',
    // One PostgreSQL server per run (when installed); test files get fresh databases on it.
    globalSetup: ['test/support/postgres-global-setup.ts'],
  },
});
