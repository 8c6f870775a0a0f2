import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient } from '../../src/api/index.js';
import { registerResendCommand } from '../../src/cli/resend-command.js';
import { resendRefusal } from '../../src/cli/resend-runner.js';
import { loadConfig } from '../../src/config/index.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { SqliteReturnsStore } from '../../src/returns/sqlite-store.js';
import { RETURNS_FILE } from '../../src/returns/store.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { runCli } from './support/run-cli.js';

let t: TestSandbox;
let client: DocexClient;
let config: string;

const cli = (...args: string[]) =>
  runCli((program, deps) => {
    registerResendCommand(program, deps);
  }, args);

/** A payload-word job makes one sending event at once, without an upload. */
async function newEvent(): Promise<string> {
  const sample = JSON.parse(
    readFileSync(new URL('../../samples/payload-word/email.json', import.meta.url), 'utf8'),
  );
  const job = await client.jobs.createPayloadWord(sample);
  const page = await client.sendingEvents.list({ jobId: job.id });
  return page.items[0]!.id;
}

beforeAll(async () => {
  t = await startTestSandbox();
  client = new DocexClient(sandboxClientOptions(t.sandbox));
  config = t.sandbox.paths.agentConfigFragment;
});

afterAll(async () => {
  await client?.close();
  await t?.stop();
});

describe('docex-agent resend', () => {
  it('re-sends a final event as a new one that names its source', async () => {
    const id = await newEvent();
    await t.advance(120_000);
    expect((await client.sendingEvents.get(id)).businessStatus).toBe('SUCCESS');
    const run = await cli('resend', id, '--config', config, '-o', 'json');
    expect(run.exitCode, run.stderr).toBe(0);
    const created = JSON.parse(run.stdout);
    expect(created.resendOf).toBe(id);
    expect(created.id).not.toBe(id);
    expect((await client.sendingEvents.get(created.id)).resendOf).toBe(id);

    // A re-send of the re-send is what the specification forbids: refused before any POST.
    const again = await cli('resend', created.id, '--config', config);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^error DOCEX_RESEND_OF_RESEND: .*re-send ${id} instead`));
  });

  it('marks the job of a re-sent event for a poll in returns.sqlite, so it is followed without webhooks', async () => {
    const id = await newEvent();
    await t.advance(120_000);
    const jobId = (await client.sendingEvents.get(id)).jobId;
    const { stateDir } = loadConfig(config).config;
    const now = Date.now();
    // What the follower left: the job followed to its end, next poll far away.
    const store = SqliteReturnsStore.open(path.join(stateDir, RETURNS_FILE), now);
    await store.addJobs(
      [
        {
          jobId,
          source: {
            itemId: 1,
            folder: 'pdf',
            fileName: 'a.pdf',
            sha256: 'ab',
            claimedAt: now,
            day: '2026-11-21',
          },
          statusPath: (collision) => statusFilePath('2026-11-21', 'a.pdf', 1, collision),
          itemId: 1,
          rowIndex: undefined,
          label: undefined,
          jobName: undefined,
          recordedAt: now,
          firstPollAt: now,
        },
      ],
      'cursor',
      '1',
      now,
    );
    const far = now + 86_400_000;
    await store.recordPoll(
      {
        jobId,
        status: 'COMPLETED',
        jobJson: '{}',
        nextPollAt: far,
        unchangedPolls: 3,
        done: true,
        changed: true,
      },
      now,
    );
    expect(await store.dueJobs(far - 1, 10)).toEqual([]);
    await store.close();
    try {
      const run = await cli('resend', id, '--config', config, '-o', 'json');
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toBe('');
      const after = SqliteReturnsStore.open(path.join(stateDir, RETURNS_FILE), Date.now());
      expect(await after.job(jobId)).toMatchObject({ done: false, unchangedPolls: 0 });
      expect((await after.dueJobs(Date.now(), 10)).map((j) => j.jobId)).toEqual([jobId]);
      await after.close();
    } finally {
      for (const f of ['', '-wal', '-shm'])
        rmSync(path.join(stateDir, `${RETURNS_FILE}${f}`), { force: true });
    }
  });

  it('refuses to re-send an event already re-sent, unless --again says so', async () => {
    const id = await newEvent();
    await t.advance(120_000);
    expect((await cli('resend', id, '--config', config)).exitCode).toBe(0);
    const twice = await cli('resend', id, '--config', config);
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toMatch(
      /^error DOCEX_RESEND_DONE: sending event .* was already re-sent as .*--again/,
    );
    const jobId = (await client.sendingEvents.get(id)).jobId;
    expect((await client.sendingEvents.list({ jobId })).items).toHaveLength(2);
    expect((await cli('resend', id, '--config', config, '--again')).exitCode).toBe(0);
    expect((await client.sendingEvents.list({ jobId })).items).toHaveLength(3);
  });

  it('finds a re-send whose answer was lost in the service list and reports it, without re-sending', async () => {
    const id = await newEvent();
    await t.advance(120_000);
    await t.control('POST', '/faults', {
      route: '/sending-events/:id/resend',
      method: 'POST',
      dropAnswerNext: 1,
    });
    try {
      const run = await cli('resend', id, '--config', config, '-o', 'json');
      expect(run.exitCode, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).resendOf).toBe(id);
    } finally {
      await t.control('DELETE', '/faults');
    }
    const jobId = (await client.sendingEvents.get(id)).jobId;
    expect((await client.sendingEvents.list({ jobId })).items).toHaveLength(2);
  });

  it('refuses an event that has not reached a final state', async () => {
    const id = await newEvent();
    const run = await cli('resend', id, '--config', config);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(
      /^error DOCEX_RESEND_NOT_FINAL: .*not in a final state \(business NOT_STARTED/,
    );
    expect(
      (await client.sendingEvents.list({ jobId: (await client.sendingEvents.get(id)).jobId })).items,
    ).toHaveLength(1);
  });

  it('reports an unknown event with the service answer 404', async () => {
    const run = await cli('resend', 'se_does_not_exist', '--config', config);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^error DOCEX_API_404: /);
  });
});

describe('resend refusal rules', () => {
  it('only a final event that is not itself a re-send may be re-sent', () => {
    const base = { id: 'se_1', resendOf: undefined };
    expect(resendRefusal({ ...base, status: 'SUCCESS', businessStatus: 'SUCCESS' })).toBeUndefined();
    expect(resendRefusal({ ...base, status: 'FAILURE', businessStatus: 'FAILURE' })).toBeUndefined();
    expect(resendRefusal({ ...base, status: 'WARNING', businessStatus: 'REJECTED' })).toBeUndefined();
    expect(resendRefusal({ ...base, status: 'IN_PROGRESS', businessStatus: 'SUCCESS' })?.code).toBe(
      'DOCEX_RESEND_NOT_FINAL',
    );
    expect(resendRefusal({ ...base, status: 'IN_PROGRESS', businessStatus: 'IN_PROGRESS' })?.code).toBe(
      'DOCEX_RESEND_NOT_FINAL',
    );
    expect(
      resendRefusal({ id: 'se_2', resendOf: 'se_1', status: 'SUCCESS', businessStatus: 'SUCCESS' })?.code,
    ).toBe('DOCEX_RESEND_OF_RESEND');
  });
});
