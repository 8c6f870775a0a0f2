/**
 * A recursive folder's file survives a SIGKILL right after its claim: a real agent process armed
 * with DOCEX_TEST_CRASH_AT=after-claim kills itself once the file is in `.processing/acme/invoices/`
 * and its claim recorded; the next start resumes it from the journal and sends it once, under the
 * route of its sub-path, archived under the same sub-path.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '../../bench/chaos/scenario.js';
import { systemClock } from '../../src/core/clock.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { listFiles, makePdf, md5, type SandboxJob } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';
import { waitFor } from '../support/wait-for.js';

let dir: string;
let sandbox: TestSandbox;
let configFile: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-recursive-kill-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  configFile = writeAgentConfig(dir, sandbox, {
    shutdownGraceMs: '2s',
    folders: [
      {
        ...PDF_FOLDER,
        recursive: { depth: 2 },
        routes: [
          {
            match: 'acme/invoices/*.pdf',
            workflowId: SEED.workflows.managedPdfEmail,
            managedCompanyId: SEED.managedCompanyId,
          },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a recursive folder across a SIGKILL', () => {
  it('resumes a file killed right after its claim in a sub-folder, and sends and archives it once under its sub-path', async () => {
    const pdf = await makePdf('killed after its claim');
    const sub = path.join(dir, 'in', 'acme', 'invoices');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, 'inv-9.pdf.part'), pdf);
    renameSync(path.join(sub, 'inv-9.pdf.part'), path.join(sub, 'inv-9.pdf'));

    const armed = spawnAgent(configFile, { DOCEX_TEST_CRASH_AT: 'after-claim' });
    await within(armed.exited, 60_000, 'the crash after the claim');
    expect(armed.child.signalCode, armed.tail.join('\n')).toBe('SIGKILL');
    expect(listFiles(path.join(dir, 'in', '.processing'))).toEqual([
      path.join('acme', 'invoices', 'inv-9.pdf'),
    ]);

    const agent = spawnAgent(configFile);
    const archived = path.join(dir, 'archive', 'acme', 'invoices');
    await waitFor(() => listFiles(archived).some((f) => f.endsWith('inv-9.pdf.result.json')), 60_000);
    agent.child.kill('SIGTERM');
    const { code } = await agent.exited;
    expect(code, agent.tail.join('\n')).toBe(0);
    expect(agent.records.find((r) => r['msg'] === 'agent started')).toMatchObject({ resumed: 1 });

    const jobs = ((await sandbox.control('GET', '/jobs')).body.items as SandboxJob[]).filter(
      (j) => j.uploadedMd5 === md5(pdf),
    );
    expect(jobs).toEqual([
      expect.objectContaining({ filename: 'inv-9.pdf', workflowId: SEED.workflows.managedPdfEmail }),
    ]);
    expect(listFiles(path.join(dir, 'in'))).toEqual([]);
  });
});
