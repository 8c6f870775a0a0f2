/**
 * `docex-agent journal copy` of a large journal, measured: done files with 3 history entries each
 * (test/journal/support/copy-fixtures.ts builds it with raw inserts), copied by the command into a
 * PostgreSQL server of its own with the server's default durability (fsync and full-page writes
 * on, unlike the shared test server). 10,000 files in the suite; docs/benchmarks.md's figure:
 *
 *   DOCEX_COPY_FILES=100000 npx vitest run test/cli/journal-copy-scale.test.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerJournalCommand } from '../../src/cli/journal-command.js';
import { doneJournal } from '../journal/support/copy-fixtures.js';
import { describePostgres, startPostgresServer, type TestPostgresServer } from '../support/postgres.js';
import { runCli } from './support/run-cli.js';

const FILES = Number(process.env.DOCEX_COPY_FILES ?? 10_000);

describePostgres(`journal copy of ${FILES.toLocaleString('en-US')} done files`, () => {
  let server: TestPostgresServer;
  let dir: string;

  beforeAll(async () => {
    server = await startPostgresServer({ extraConfig: ['fsync = on', 'full_page_writes = on'] });
    dir = mkdtempSync(path.join(tmpdir(), 'docex-copy-scale-'));
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies every file and history entry in one transaction, and says how long it took', async () => {
    const stateDir = path.join(dir, 'state');
    const built = performance.now();
    await doneJournal(path.join(stateDir, 'journal.sqlite'), { files: FILES });
    const buildMs = performance.now() - built;
    const config = path.join(dir, 'agent.yaml');
    writeFileSync(config, stringify({ stateDir, sandbox: { enabled: true } }));
    const url = await server.createDatabase();

    const started = performance.now();
    const run = await runCli(
      (program, deps) => registerJournalCommand(program, deps),
      ['journal', 'copy', '--to', url, '--config', config, '--sslmode', 'disable'],
    );
    const commandMs = performance.now() - started;
    expect(run.exitCode, run.stderr).toBe(0);
    const n = FILES.toLocaleString('en-US');
    expect(run.stdout).toContain(
      `${n} items (${n} files, 0 payload rows), ${(FILES * 3).toLocaleString('en-US')} history entries, 0 inspections`,
    );
    console.log(
      `[journal copy scale] ${n} files: journal built in ${(buildMs / 1000).toFixed(1)} s; ` +
        `command ${(commandMs / 1000).toFixed(1)} s\n${run.stdout}`,
    );
  }, 600_000);
});
