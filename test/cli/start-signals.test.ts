/**
 * `docex-agent start` as a real process: a SIGHUP (systemctl reload) that arrives while the agent
 * drains after SIGTERM must neither end the process nor cut the drain short.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';
import { waitFor } from '../support/wait-for.js';

const UPLOAD_LATENCY_MS = 2500;

let dir: string;
let sandbox: TestSandbox;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-sig-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('signals of a running agent process', () => {
  it('ignores a SIGHUP during the graceful stop: the upload in flight finishes, the file is archived and the exit code is 0', async () => {
    mkdirSync(path.join(dir, 'in'), { recursive: true });
    const configFile = writeAgentConfig(dir, sandbox, {
      shutdownGraceMs: '20s',
      ops: { enabled: false },
      folders: [PDF_FOLDER],
    });
    // The upload takes a while, so the stop has a drain to wait for.
    const fault = await sandbox.control('POST', '/faults', {
      route: '/upload/:jobId',
      latencyMs: UPLOAD_LATENCY_MS,
    });
    expect(fault.status).toBe(201);

    const agent = spawnAgent(configFile);
    const { child } = agent;
    const seen = (msg: string) => () => agent.seen(msg);
    try {
      await waitFor(seen('agent started'), 30_000);
      const temp = path.join(dir, 'in', 'slow.pdf.part');
      writeFileSync(temp, await makePdf('drained during the stop'));
      renameSync(temp, path.join(dir, 'in', 'slow.pdf'));
      await waitFor(seen('file taken'));

      child.kill('SIGTERM');
      await waitFor(seen('stopping agent'));
      child.kill('SIGHUP');

      const end = await agent.exited;
      const context = agent.tail.slice(-30).join('\n');
      expect(end, context).toEqual({ code: 0, signal: null });
      expect(
        agent.records.find((l) => l['msg'] === 'agent stopped'),
        context,
      ).toMatchObject({ drained: true });
      expect(seen('reload ignored: the agent is stopping')(), context).toBe(true);
      expect(seen('configuration reload')(), context).toBe(false);
      expect(listFiles(path.join(dir, 'archive')).some((f) => f.endsWith('slow.pdf.result.json'))).toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await sandbox.control('DELETE', '/faults');
    }
  }, 60_000);
});
