/**
 * A file's retry state survives a crash: a real agent process fails a try (the sandbox answers
 * its create 503), records the failed try and the wait, and is killed right there
 * (DOCEX_TEST_CRASH_AT=after-failed-try). The next start reads the count back: its next failed
 * try is the second in a row, not a first again, and once the service answers the file is sent
 * exactly once.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../src/config/index.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { makePdf, md5, type SandboxJob } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';

let dir: string;
let sandbox: TestSandbox;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-retry-crash-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox') });
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const failCreates = (n: number) =>
  sandbox.control('POST', '/faults', { route: '/jobs/single-file', failNext: n, status: 503 });

it('continues the count of failed tries in a row after a crash right after one was recorded', async () => {
  const configFile = writeAgentConfig(dir, sandbox, { folders: [PDF_FOLDER] });
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  // The client retries a 503 itself before the try fails: enough faults for two failed tries.
  await failCreates(1_000);
  const first = spawnAgent(configFile, { DOCEX_TEST_CRASH_AT: 'after-failed-try' });
  await first.logged('agent started');
  const pdf = await makePdf('retry state across a crash');
  writeFileSync(path.join(dir, 'in', 'a.pdf.part'), pdf);
  renameSync(path.join(dir, 'in', 'a.pdf.part'), path.join(dir, 'in', 'a.pdf'));
  const { signal } = await first.exited;
  expect(signal, first.tail.join('\n')).toBe('SIGKILL');

  const journal = SqliteJournal.open(path.join(dir, 'state', JOURNAL_FILE), {
    clock: systemClock,
    log: silentLogger(),
  });
  const [item] = await journal.recent(1);
  await journal.close();
  expect(item).toMatchObject({ fileName: 'a.pdf', failedTries: 1, lastFailureCode: 'DOCEX_API_503' });
  expect(item?.nextTryAt).toBeGreaterThan(item?.updatedAt ?? Number.POSITIVE_INFINITY);

  const second = spawnAgent(configFile);
  try {
    await new Promise<void>((resolve) =>
      second.onRecord((r) => {
        if (r['msg'] === 'file must wait') resolve();
      }),
    );
    expect(second.records.find((r) => r['msg'] === 'file must wait')).toMatchObject({ try: 2 });
    await sandbox.control('DELETE', '/faults');
    await second.logged('file archived');
    const jobs = ((await sandbox.control('GET', '/jobs')).body.items as SandboxJob[]).filter(
      (j) => j.filename === 'a.pdf' && j.uploadedMd5 !== null,
    );
    expect(jobs.map((j) => j.uploadedMd5)).toEqual([md5(pdf)]);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 60_000);
