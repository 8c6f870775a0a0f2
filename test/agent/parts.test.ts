import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, type AgentClient } from '../../src/agent/agent.js';
import { Opened, type Part, startParts, stopParts } from '../../src/agent/parts.js';
import { agentConfigSchema } from '../../src/config/index.js';
import { isDocexError } from '../../src/core/errors.js';
import { acquireJournalLock } from '../../src/journal/index.js';
import { captureLogger } from '../api/support/log-capture.js';

/** Parts that write what happens to them; `failing` names the ones whose start or stop throws. */
function recorded(names: string[], failing: { start?: string; stop?: string } = {}) {
  const events: string[] = [];
  const parts: Part[] = names.map((name) => ({
    name,
    start() {
      events.push(`start ${name}`);
      if (failing.start === name) throw new Error(`${name} failed to start`);
    },
    async stop() {
      events.push(`stop ${name}`);
      if (failing.stop === name) throw new Error(`${name} failed to stop`);
    },
  }));
  return { events, parts };
}

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('agent parts', () => {
  it('start in order and stop in reverse', async () => {
    const { log } = captureLogger();
    const { events, parts } = recorded(['journal', 'folders', 'housekeeping']);
    const started = await startParts(parts, log);
    expect(await stopParts(started, log)).toEqual([]);
    expect(events).toEqual([
      'start journal',
      'start folders',
      'start housekeeping',
      'stop housekeeping',
      'stop folders',
      'stop journal',
    ]);
    expect(started).toEqual([]);
  });

  it('a start that fails stops the failed part and those before it, in reverse, and throws its error', async () => {
    const { log } = captureLogger();
    const { events, parts } = recorded(['lock', 'journal', 'folders', 'housekeeping'], { start: 'folders' });
    await expect(startParts(parts, log)).rejects.toThrow('folders failed to start');
    expect(events).toEqual([
      'start lock',
      'start journal',
      'start folders',
      'stop folders',
      'stop journal',
      'stop lock',
    ]);
  });

  it('a part failing to stop is reported and logged, and the parts before it still stop', async () => {
    const { log, lines } = captureLogger();
    const { events, parts } = recorded(['journal', 'folders', 'returns'], { stop: 'folders' });
    const failures = await stopParts(await startParts(parts, log), log);
    expect(failures).toEqual([
      { part: 'folders', error: expect.objectContaining({ message: 'folders failed to stop' }) },
    ]);
    expect(events.slice(3)).toEqual(['stop returns', 'stop folders', 'stop journal']);
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 'error', part: 'folders', msg: 'part failed to stop' }),
    );
  });

  it('an opened part closes what it opened, and its value read before start throws DOCEX_INTERNAL', async () => {
    const closed: string[] = [];
    const part = new Opened(
      'journal',
      () => 'the journal',
      (value) => void closed.push(value),
    );
    expect(() => part.value).toThrow(expect.objectContaining({ code: 'DOCEX_INTERNAL' }));
    await part.stop();
    expect(closed).toEqual([]);
    await part.start();
    expect(part.value).toBe('the journal');
    await part.stop();
    expect(closed).toEqual(['the journal']);
  });

  it('an agent whose folders fail to start releases the state lock it took', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-parts-'));
    const stateDir = path.join(dir, 'state');
    // An SFTP folder's local spool below a plain file cannot be made (ENOTDIR): the folders part
    // fails (a local drop folder that cannot be written stops that folder alone).
    writeFileSync(path.join(dir, 'plain-file'), 'not a folder');
    const config = agentConfigSchema.parse({
      sandbox: { enabled: true },
      stateDir,
      folders: [
        {
          name: 'invoices',
          workflowId: 'wf-1',
          source: {
            type: 'sftp',
            host: '127.0.0.1',
            username: 'erp',
            password: 'pw',
            hostKey: { sha256: ['SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU'] },
            path: '/outbox',
            spoolDir: path.join(dir, 'plain-file', 'spool'),
          },
          archiveDir: path.join(dir, 'archive'),
          errorDir: path.join(dir, 'error'),
        },
      ],
    });
    // Never called: the folders fail before their workflows are fetched.
    const client = { jobs: {}, workflows: { get: () => Promise.reject(new Error('not called')) } };
    const { log, lines } = captureLogger();
    const failed = await Agent.start({ config, log, client: client as unknown as AgentClient }).catch(
      (e) => e,
    );
    expect(failed).toMatchObject({ code: 'ENOTDIR' });
    expect(isDocexError(failed)).toBe(false);
    const lock = acquireJournalLock(stateDir);
    lock.release();
    expect(lines().filter((l) => l['msg'] === 'part failed to stop')).toEqual([]);
    expect(lines().some((l) => l['msg'] === 'agent started')).toBe(false);
  });
});
