import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Sandboxes and SQLite files are per test file; forks keep native modules isolated.
    pool: 'forks',
    // One PostgreSQL server per run (when installed); test files get fresh databases on it.
    globalSetup: ['test/support/postgres-global-setup.ts'],
  },
});
