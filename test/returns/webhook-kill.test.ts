/**
 * A webhook answered 202 and then lost to SIGKILL: a real agent process with webhooks and polling
 * both on follows a job whose next poll a poll while webhooks arrived put 30 minutes out; a
 * delivery for the job is answered 202 and the agent is killed as soon as the answer is seen. The
 * store must already hold the job's poll due (the effect was recorded before the answer), the
 * restarted agent must poll the job within the first minute of its start, and the sender's
 * redelivery of the same id must be a duplicate. The sandbox's clock only moves when the test
 * moves it, so the job stays unfinished throughout; the agent process runs on real time.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/core/sqlite.js';
import { RETURNS_FILE } from '../../src/returns/store.js';
import { storeWebhookSecret } from '../../src/returns/webhook-secrets.js';
import { newWebhookSecret } from '../../src/sandbox/routes/webhooks.js';
import { makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { type AgentProcess, PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';
import { waitFor } from '../support/wait-for.js';

const PATH = '/docex/webhooks';
const THIRTY_MINUTES = 30 * 60_000;

let dir: string;
let sandbox: TestSandbox;
let configFile: string;
/** The receiver of the agent started last (each start listens on a port the OS picks). */
let url: string;
let secret: string;
const running: AgentProcess[] = [];

interface JobState {
  jobId: string;
  nextPollAt: number;
  polls: number;
  done: number;
}

/** The followed job as returns.sqlite holds it (read-only: the agent may be running). */
function jobState(): JobState | undefined {
  const file = path.join(dir, 'state', RETURNS_FILE);
  let db: InstanceType<typeof Database> | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    const row = db
      .prepare('SELECT job_id, next_poll_at, polls, done FROM jobs ORDER BY job_id LIMIT 1')
      .get() as { job_id: string; next_poll_at: number; polls: number; done: number } | undefined;
    return row && { jobId: row.job_id, nextPollAt: row.next_poll_at, polls: row.polls, done: row.done };
  } catch {
    return undefined; // not created yet
  } finally {
    db?.close();
  }
}

/** Signs and POSTs a delivery; answers the status as soon as the answer's head arrives. */
async function deliver(id: string, type: string, data: Record<string, unknown>): Promise<number> {
  const text = JSON.stringify({ id: `evt_${id}`, type, timestamp: new Date().toISOString(), data });
  const at = new Date();
  const res = await request(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, text),
    },
    body: text,
  });
  const status = res.statusCode;
  res.body.dump().catch(() => undefined);
  return status;
}

function start(): AgentProcess {
  const agent = spawnAgent(configFile);
  running.push(agent);
  return agent;
}

async function started(agent: AgentProcess): Promise<void> {
  await Promise.race([
    Promise.all([agent.logged('agent started'), agent.logged('webhook receiver listening')]),
    agent.exited.then(() => {
      throw new Error(`the agent exited at start:\n${agent.tail.join('\n')}`);
    }),
  ]);
  const listening = agent.records.find((r) => r['msg'] === 'webhook receiver listening');
  url = `http://${String(listening?.['listen'])}${PATH}`;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhook-kill-'));
  // The sandbox's own ManualClock: the job's sending event stays in progress until the test moves it.
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox') });
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  secret = newWebhookSecret();
  storeWebhookSecret(path.join(dir, 'state'), 'wh_kill', secret);
  configFile = writeAgentConfig(dir, sandbox, {
    folders: [PDF_FOLDER],
    ops: { enabled: false },
    peppolInbox: { enabled: false },
    // Port 0: each start gets its own port from the OS, read back from its log (a port picked
    // beforehand can be taken meanwhile by another process).
    webhooks: { enabled: true, listen: '127.0.0.1:0', path: PATH },
    returns: {
      follow: { schedule: '* * * * * *', firstPollMs: 0, minIntervalMs: '1s', maxIntervalMs: '2s' },
    },
  });
});

afterEach(async () => {
  for (const agent of running.splice(0)) {
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
    await agent.exited;
  }
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a webhook answered 202, then the agent killed with SIGKILL', () => {
  it('leaves the job due in the store; the restart polls it within its first minute and the redelivery is a duplicate', async () => {
    const first = start();
    await started(first);
    // Webhooks arrive: the follower's polls are the safety net, intervalWhileWebhooksMs apart.
    expect(await deliver('msg_test', 'job.status.changed', { jobId: 'job_test', test: true })).toBe(202);

    const name = 'webhook-kill.pdf';
    writeFileSync(path.join(dir, 'in', `${name}.part`), await makePdf(name));
    renameSync(path.join(dir, 'in', `${name}.part`), path.join(dir, 'in', name));
    // Followed and polled once while webhooks arrive: its next poll is 30 minutes out.
    const polled = await waitFor(() => {
      const s = jobState();
      return s && s.polls >= 1 && s.nextPollAt > Date.now() + THIRTY_MINUTES - 60_000 ? s : undefined;
    }, 30_000);
    expect(polled.done, first.tail.join('\n')).toBe(0);

    // The job's final event arrives as a webhook: answered 202, and the agent dies right then.
    const sentAt = Date.now();
    const status = await deliver('msg_final', 'job.status.changed', {
      jobId: polled.jobId,
      status: 'COMPLETED',
    });
    first.child.kill('SIGKILL');
    const answeredAt = Date.now();
    expect(status).toBe(202);
    expect((await first.exited).signal).toBe('SIGKILL');

    // Recorded before the answer: the job is due, not 30 minutes out. (Unless the poll the
    // delivery asked for ran before the kill landed: then it is recorded as a further poll.)
    const afterKill = jobState()!;
    if (afterKill.polls === polled.polls) expect(afterKill.nextPollAt).toBeLessThanOrEqual(answeredAt);
    expect(afterKill.nextPollAt >= sentAt - 1 || afterKill.polls > polled.polls).toBe(true);

    // The restart polls it within the first minute of its start (its poll is due: at once).
    const startedAt = Date.now();
    const second = start();
    await started(second);
    await waitFor(() => (jobState()?.polls ?? 0) > afterKill.polls || undefined, 60_000);
    expect(Date.now() - startedAt).toBeLessThan(60_000);
    // And every unfinished job was made due within that minute (webhooks may have been missed).
    await waitFor(() => second.seen('unfinished jobs polled within a minute: webhooks may have been missed'));

    // The sender's redelivery of the delivery it saw answered: a duplicate.
    expect(
      await deliver('msg_final', 'job.status.changed', { jobId: polled.jobId, status: 'COMPLETED' }),
    ).toBe(200);

    second.child.kill('SIGTERM');
    const { code } = await second.exited;
    expect(code, second.tail.join('\n')).toBe(0);
  }, 120_000);
});
