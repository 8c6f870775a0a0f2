import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent, AgentClient } from '../../src/agent/agent.js';
import { transportError } from '../../src/api/errors.js';
import { DocexClient } from '../../src/api/index.js';
import { waitingText } from '../../src/cli/status-runner.js';
import { silentLogger } from '../../src/core/logger.js';
import { AgentMetrics, agentView, type RunningOps, startOps } from '../../src/ops/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { canOpen } from '../../src/sources/local/observe-file.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import {
  clientWith,
  type Harness,
  listFiles,
  makeHarness,
  makePdf,
} from '../pipeline/support/agent-harness.js';
import { pump, returnsConfig } from '../returns/support/returns-harness.js';
import { waitFor } from '../support/wait-for.js';

const WINDOW_MS = 2 * 3_600_000;

let h: Harness;
let ops: RunningOps | undefined;
let client: DocexClient | undefined;

beforeEach(async () => {
  h = await makeHarness({ uploadWindowMs: WINDOW_MS });
});

afterEach(async () => {
  await ops?.stop();
  ops = undefined;
  await h.stopAgents();
  await client?.close();
  client = undefined;
  await h.cleanup();
});

/** An agent on the harness sandbox whose client reports to `metrics`, with the ops endpoints on port 0. */
async function startWithOps(
  options: {
    wrap?: (c: DocexClient) => AgentClient;
    folders?: string[];
    /** Each folder's send window. */
    window?: { days: string; from: string; to: string; timeZone: string; except: string[] };
    extra?: Parameters<Harness['config']>[1];
    agentOptions?: Parameters<Harness['startAgent']>[1];
  } = {},
): Promise<{ agent: Agent; metrics: AgentMetrics; url: string }> {
  const metrics = new AgentMetrics({ processMetrics: false });
  client = new DocexClient(
    sandboxClientOptions(h.sandbox.sandbox, {
      clock: h.clock,
      retry: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 },
      observer: metrics.apiObserver,
    }),
  );
  const config = h.config(
    (options.folders ?? ['invoices']).map((name) => ({
      name,
      workflowId: SEED.workflows.pdfEmail,
      ...(options.window ? { window: options.window } : {}),
    })),
    options.extra,
  );
  const agent = await h.startAgent(config, {
    // The pace's waits and backoffs, as the command line wires them.
    apiObserver: metrics.apiObserver,
    ...options.agentOptions,
    client: options.wrap ? options.wrap(client) : client,
  });
  ops = await startOps({
    config: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, metrics: true },
    log: silentLogger(),
    metrics,
    checkTimeoutMs: 3_000,
  });
  // The agent was given its client: the sandbox's certificate is the one it presents.
  const view = {
    ...agentView(agent, config, h.clock),
    certificatePem: () => h.sandbox.sandbox.credentials.clientCertPem,
  };
  const real = client;
  // A wrapped client has no token provider of its own: the real one behind it answers.
  ops.attach(
    options.wrap
      ? {
          ...view,
          getToken: (signal) => real.tokens.getToken(signal),
          pingApi: (signal) => real.health({ signal }),
        }
      : view,
  );
  return { agent, metrics, url: ops.url };
}

async function get(url: string): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The value of one sample line, e.g. `docex_files_taken_total{folder="invoices"}`. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('ops endpoints', () => {
  it('answers /healthz 200 and /readyz 200 with one passing entry per check', async () => {
    const { url } = await startWithOps();
    const health = await get(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual({ status: 'ok' });

    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const report = JSON.parse(ready.text);
    expect(report.ready).toBe(true);
    expect(Object.keys(report.checks).sort()).toEqual([
      'api',
      'folders',
      'journal',
      'outputs',
      'sendWindows',
      'stoppedFolders',
      'token',
      'unreadableFiles',
      'uploadWindows',
    ]);
    for (const check of Object.values(report.checks)) expect(check).toMatchObject({ ok: true });

    expect((await get(`${url}/nothing`)).status).toBe(404);
    expect((await fetch(`${url}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('a file the agent cannot read: one warning, the gauge, /readyz detail (still ready), the status file; taken once readable', async () => {
    let locked = true;
    const probeReadable = async (p: string) =>
      locked && p.endsWith('erp-umask-077.pdf') ? 'EACCES' : canOpen(p);
    const { url, agent } = await startWithOps({
      agentOptions: { source: { statIntervalMs: 10, rescanIntervalMs: 200, watch: true, probeReadable } },
    });
    const config = h.config([{ name: 'invoices', workflowId: SEED.workflows.pdfEmail }]);
    const dropped = h.drop('invoices', 'erp-umask-077.pdf', await makePdf('dropped with umask 077'));
    chmodSync(dropped, 0o600);
    const warning = 'file the agent cannot read: it waits in the drop folder, untouched';
    // The grace (5 s) runs on the agent's clock: moved on until the warning comes.
    await waitFor(async () => {
      await h.advance(1_000);
      return h.logs.some((l) => l['msg'] === warning) || undefined;
    }, 20_000);
    for (let i = 0; i < 5; i++) await h.advance(1_000);
    expect(h.logs.filter((l) => l['msg'] === warning)).toHaveLength(1);
    expect(readdirSync(h.folderPath('invoices'))).toContain('erp-umask-077.pdf');

    const metrics = await get(`${url}/metrics`);
    expect(sample(metrics.text, 'docex_files_unreadable{folder="invoices"}')).toBe(1);
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    const check = JSON.parse(ready.text).checks.unreadableFiles;
    expect(check.ok).toBe(true);
    expect(check.detail).toMatch(
      /^1 file\(s\) the agent cannot read, stat or move wait untouched: invoices\/erp-umask-077\.pdf: cannot read \(EACCES\), mode 0600, owner .*uid 0.*Fix: the ERP's account must write files/,
    );
    // What `docex-agent status erp-umask-077.pdf` prints, from the agent's report in its state folder.
    await waitFor(
      () =>
        waitingText(config, 'erp-umask-077.pdf')?.includes('the agent cannot read it (EACCES)') || undefined,
    );
    expect(waitingText(config, 'erp-umask-077.pdf')).toMatch(
      /\[waiting in the drop folder: not taken\]\n.*\n {2}mode 0600, owner root \(uid 0\)/,
    );

    // The ERP's side fixed: the file is taken as any other, the gauge drops, the detail goes.
    chmodSync(dropped, 0o640);
    locked = false;
    await waitFor(
      () =>
        listFiles(path.join(h.dir, 'archive', 'invoices')).some((f) => f.endsWith('erp-umask-077.pdf')) ||
        undefined,
      20_000,
    );
    expect(sample((await get(`${url}/metrics`)).text, 'docex_files_unreadable{folder="invoices"}')).toBe(0);
    expect(JSON.parse((await get(`${url}/readyz`)).text).checks.unreadableFiles).toEqual({
      ok: true,
      ms: expect.any(Number),
    });
    expect(agent.unreadableFiles()).toEqual([{ folder: 'invoices', files: [] }]);
    await waitFor(() => waitingText(config, 'erp-umask-077.pdf') === undefined || undefined);
  }, 60_000);

  it("counts the files held by a folder's closed send window in /readyz's detail (still 200: a closed window is no fault) and in docex_files_held_for_window, until it opens", async () => {
    // Every hour of every day but today (UTC): closed until midnight.
    const today = new Date(h.clock.now()).toISOString().slice(0, 10);
    const window = { days: 'Mon-Sun', from: '00:00', to: '24:00', timeZone: 'UTC', except: [today] };
    const { url, agent } = await startWithOps({ window });
    const opensAt = new Date(Date.parse(today) + 86_400_000).toISOString();
    expect(sample((await get(`${url}/metrics`)).text, 'docex_files_held_for_window{folder="invoices"}')).toBe(
      0,
    );
    expect(JSON.parse((await get(`${url}/readyz`)).text).checks.sendWindows).toEqual({
      ok: true,
      ms: expect.any(Number),
    });

    for (const name of ['night-1.pdf', 'night-2.pdf']) h.drop('invoices', name, await makePdf(name));
    await waitFor(() => h.logs.filter((l) => l['msg'] === 'file waits: send window closed').length === 2);
    expect(sample((await get(`${url}/metrics`)).text, 'docex_files_held_for_window{folder="invoices"}')).toBe(
      2,
    );
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.text).checks.sendWindows).toEqual({
      ok: true,
      detail: `invoices: 2 file(s) held by its closed send window, until ${opensAt}`,
      ms: expect.any(Number),
    });

    // Midnight: the window opens, the files are sent, nothing is held any more.
    await h.advance(Date.parse(opensAt) - h.clock.now());
    await waitFor(async () => (await agent.journal.stats()).files.done === 2);
    expect(sample((await get(`${url}/metrics`)).text, 'docex_files_held_for_window{folder="invoices"}')).toBe(
      0,
    );
    expect(JSON.parse((await get(`${url}/readyz`)).text).checks.sendWindows).toEqual({
      ok: true,
      ms: expect.any(Number),
    });
  });

  it('answers /readyz 503 naming the api check once the service is gone', async () => {
    const { url } = await startWithOps();
    expect((await get(`${url}/readyz`)).status).toBe(200);
    await h.sandbox.sandbox.stop();
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const report = JSON.parse(ready.text);
    expect(report.ready).toBe(false);
    expect(report.checks.api.ok).toBe(false);
    expect(report.checks.api.detail).toMatch(/DOCEX_NETWORK/);
    expect(report.checks.folders.ok).toBe(true);
  });

  it('answers /readyz 503 when a folder of the agent can no longer be written', async () => {
    const { url, agent } = await startWithOps();
    const archive = agent.plan.running.get('invoices')!.config.archiveDir;
    rmSync(archive, { recursive: true, force: true });
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const report = JSON.parse(ready.text);
    expect(report.checks.folders).toMatchObject({ ok: false });
    expect(report.checks.folders.detail).toContain(`invoices: ${archive} (ENOENT)`);
  });

  it('answers /readyz 503 naming the folders stopped by an unknown workflow id and a missing drop folder, and counts them in /metrics', async () => {
    const mistyped = path.join(h.dir, 'no-such-parent', 'invoices');
    const config = h.config([
      { name: 'invoices', workflowId: SEED.workflows.pdfEmail },
      { name: 'typo', workflowId: 'wf_does_not_exist' },
      {
        name: 'mistyped',
        workflowId: SEED.workflows.pdfEmail,
        source: { type: 'local', path: mistyped },
        create: false,
      },
    ]);
    const agent = await h.startAgent(config);
    const metrics = new AgentMetrics({ processMetrics: false, version: '9.9.9' });
    ops = await startOps({
      config: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, metrics: true },
      log: silentLogger(),
      metrics,
    });
    ops.attach(agentView(agent, config, h.clock));
    const ready = await get(`${ops.url}/readyz`);
    expect(ready.status).toBe(503);
    const report = JSON.parse(ready.text);
    expect(report.checks.stoppedFolders).toMatchObject({ ok: false });
    expect(report.checks.stoppedFolders.detail).toMatch(/^typo: DOCEX_FOLDER_WORKFLOW: .*wf_does_not_exist/);
    expect(report.checks.stoppedFolders.detail).toContain(
      `mistyped: DOCEX_SOURCE_FOLDER_MISSING: folder mistyped: drop folder ${mistyped} (folders[2].source.path) does not exist`,
    );
    expect(existsSync(path.dirname(mistyped))).toBe(false);
    expect(report.checks.folders.ok).toBe(true);
    const text = (await get(`${ops.url}/metrics`)).text;
    expect(sample(text, 'docex_folders_stopped')).toBe(2);
    expect(sample(text, `docex_build_info{version="9.9.9",node="${process.version}"}`)).toBe(1);
    expect(sample(text, 'docex_journal_size_bytes')).toBeGreaterThan(0);
    // A SQLite journal is one agent's: it alone is alive.
    expect(sample(text, 'docex_agents_alive')).toBe(1);
    // Liveness is not readiness.
    expect((await get(`${ops.url}/healthz`)).status).toBe(200);
  });

  it('answers /readyz 503 naming an output that cannot be written, counts the failures, and is ready again once it can', async () => {
    // The statuses output lies under a regular file: every write fails with ENOTDIR.
    const blocker = path.join(h.dir, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const statuses = path.join(blocker, 'statuses');
    const { url } = await startWithOps({
      extra: { returns: returnsConfig(h, {}, { statuses: { target: { type: 'local', path: statuses } } }) },
      agentOptions: { returns: { maxSleepMs: 5 } },
    });
    h.drop('invoices', 'status.pdf', await makePdf('status'));
    const failures = await pump(h, async () => {
      const n = sample(
        (await get(`${url}/metrics`)).text,
        'docex_output_write_failures_total{output="returns.statuses.target"}',
      );
      return n !== undefined && n >= 1 ? n : undefined;
    });
    expect(failures).toBeGreaterThanOrEqual(1);
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const report = JSON.parse(ready.text);
    expect(report.checks.outputs.ok).toBe(false);
    expect(report.checks.outputs.detail).toContain('returns.statuses.target');
    expect(report.checks.outputs.detail).toContain('ENOTDIR');

    // The operator fixes the folder: the next write succeeds and the agent is ready again.
    rmSync(blocker);
    await pump(h, async () => ((await get(`${url}/readyz`)).status === 200 ? true : undefined));
  });

  it('answers /readyz 503 once a pending upload is past 90% of its window, and shows the time left', async () => {
    // The files host "fails" every upload: the job stays created and its window runs down.
    const { url } = await startWithOps({
      wrap: (c) =>
        clientWith(c, () => ({
          uploadFile: async () =>
            Promise.reject(
              transportError(
                Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
                'PUT',
                '/upload/{jobId}',
              ),
            ),
        })),
    });
    h.drop('invoices', 'late.pdf', await makePdf('late'));
    const pending = await waitFor(async () => {
      const text = (await get(`${url}/metrics`)).text;
      return sample(text, 'docex_upload_window_remaining_seconds{folder="invoices"}');
    });
    expect(pending).toBeGreaterThan(WINDOW_MS / 1000 - 60);
    expect((await get(`${url}/readyz`)).status).toBe(200);

    h.clock.advance(WINDOW_MS * 0.85);
    expect((await get(`${url}/readyz`)).status).toBe(200);
    h.clock.advance(WINDOW_MS * 0.06);
    const ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    const report = JSON.parse(ready.text);
    expect(report.checks.uploadWindows.ok).toBe(false);
    expect(report.checks.uploadWindows.detail).toContain('invoices/late.pdf');
    const left = sample(
      (await get(`${url}/metrics`)).text,
      'docex_upload_window_remaining_seconds{folder="invoices"}',
    );
    expect(left).toBeLessThan((WINDOW_MS * 0.1) / 1000);
    expect(left).toBeGreaterThan(0);
    // The file waits in state created; it was claimed 91% of a window ago.
    const metrics = (await get(`${url}/metrics`)).text;
    expect(sample(metrics, 'docex_files_waiting{folder="invoices",state="created"}')).toBe(1);
    expect(
      sample(metrics, 'docex_oldest_waiting_file_age_seconds{folder="invoices"}'),
    ).toBeGreaterThanOrEqual((WINDOW_MS * 0.91) / 1000);
  });

  it('serves Prometheus text whose counts move when a file is processed and when a file is rejected', async () => {
    const { url } = await startWithOps();
    const before = await get(`${url}/metrics`);
    expect(before.status).toBe(200);
    expect(before.type).toContain('text/plain');
    for (const name of [
      'docex_files_taken_total',
      'docex_files_submitted_total',
      'docex_files_rejected_total',
      'docex_jobs_created_total',
      'docex_upload_bytes_total',
      'docex_upload_duration_seconds',
      'docex_api_request_duration_seconds',
      'docex_token_refreshes_total',
      'docex_queue_depth',
      'docex_upload_window_remaining_seconds',
      'docex_client_certificate_expiry_days',
      'docex_proofs_archived_total',
      'docex_peppol_documents_archived_total',
      'docex_webhook_deliveries_total',
    ]) {
      expect(before.text).toContain(`# TYPE ${name} `);
    }
    expect(sample(before.text, 'docex_files_taken_total{folder="invoices"}')).toBeUndefined();
    expect(sample(before.text, 'docex_upload_bytes_total')).toBe(0);
    const days = sample(before.text, 'docex_client_certificate_expiry_days');
    expect(days).toBeGreaterThan(30);

    const pdf = await makePdf('counted');
    h.drop('invoices', 'one.pdf', pdf);
    h.drop('invoices', 'bad.pdf', 'not a pdf at all');
    const after = await waitFor(async () => {
      const text = (await get(`${url}/metrics`)).text;
      const done =
        sample(text, 'docex_files_submitted_total{folder="invoices"}') === 1 &&
        /^docex_files_rejected_total\{folder="invoices",reason="DOCEX_[A-Z_]+"\} 1$/m.test(text);
      return done ? text : undefined;
    });
    expect(sample(after, 'docex_files_taken_total{folder="invoices"}')).toBe(2);
    expect(sample(after, 'docex_jobs_created_total{folder="invoices"}')).toBe(1);
    expect(sample(after, 'docex_upload_bytes_total')).toBe(pdf.length);
    expect(sample(after, 'docex_upload_duration_seconds_count{status="200"}')).toBe(1);
    expect(sample(after, 'docex_token_refreshes_total{result="ok"}')).toBe(1);
    expect(after).toMatch(
      /docex_api_request_duration_seconds_count\{method="POST",route="\/jobs\/single-file",status="201"\} 1/,
    );
    expect(after).toMatch(
      /docex_api_request_duration_seconds_count\{method="PUT",route="\{fileUploadUrl\}",status="200"\} 1/,
    );
    expect(after).toMatch(
      /docex_api_request_duration_seconds_count\{method="POST",route="\/oauth2\/token",status="200"\} 1/,
    );
    // The queue empties once both files are archived or placed in error/.
    await waitFor(async () => sample((await get(`${url}/metrics`)).text, 'docex_queue_depth') === 0);
  });

  it('counts the proofs the return path archived', async () => {
    const { url } = await startWithOps({
      extra: { returns: returnsConfig(h) },
      agentOptions: { returns: { maxSleepMs: 5 } },
    });
    h.drop('invoices', 'proved.pdf', await makePdf('proved'));
    const proofs = await pump(h, async () => {
      const n = sample((await get(`${url}/metrics`)).text, 'docex_proofs_archived_total');
      return n !== undefined && n >= 2 ? n : undefined;
    });
    // The e-mail workflow's event has a submission report and a delivery proof.
    expect(proofs).toBe(2);
  });

  it("shows the follower's current concurrency, as its pacing sets it", async () => {
    const { agent, url } = await startWithOps({
      extra: { returns: returnsConfig(h) },
      agentOptions: { returns: { maxSleepMs: 5 } },
    });
    const pacing = agent.returns!.follower.gate.pacing;
    expect(sample((await get(`${url}/metrics`)).text, 'docex_follow_concurrency')).toBe(pacing.limit());
    // Two 429 answers in a row, each after a decrease: the limit halves twice (auto starts at 4).
    pacing.answered(pacing.started(0), { ok: false, status: 429 }, 0, true);
    pacing.answered(pacing.started(0), { ok: false, status: 429 }, 0, true);
    expect(pacing.limit()).toBe(1);
    expect(sample((await get(`${url}/metrics`)).text, 'docex_follow_concurrency')).toBe(1);
  });

  it('shows the pace of the service host: its concurrency, the calls in flight, the waits and the 429 backoffs by caller', async () => {
    const { agent, url } = await startWithOps({ agentOptions: { returns: { maxSleepMs: 5 } } });
    const before = (await get(`${url}/metrics`)).text;
    expect(sample(before, 'docex_api_concurrency')).toBe(4);
    expect(sample(before, 'docex_api_calls_in_flight')).toBe(0);
    const fault = { route: '/jobs/single-file', method: 'POST', failNext: 1, status: 429, retryAfter: '30' };
    expect((await h.sandbox.control('POST', '/faults', fault)).status).toBe(201);
    h.drop('invoices', 'paced.pdf', await makePdf('paced'));
    await pump(h, async () => (await agent.journal.stats()).files.done === 1, { stepMs: 5000 });
    const text = (await get(`${url}/metrics`)).text;
    expect(sample(text, 'docex_api_backoffs_total{caller="intake",status="429"}')).toBe(1);
    expect(sample(text, 'docex_api_concurrency')).toBe(2);
    // The create tried again waited out the 30 s Retry-After on the clock.
    expect(sample(text, 'docex_api_pace_wait_seconds_count{caller="intake"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'docex_api_pace_wait_seconds_sum{caller="intake"}')).toBeGreaterThanOrEqual(1);
  });

  it('counts the incoming Peppol documents the inbox saved', async () => {
    const { agent, url } = await startWithOps({
      extra: { peppolInbox: { enabled: true, target: { type: 'local', path: path.join(h.dir, 'inbox') } } },
    });
    await agent.inbound?.poller?.poll();
    const saved = sample((await get(`${url}/metrics`)).text, 'docex_peppol_documents_archived_total');
    expect(saved).toBeGreaterThan(0);
    expect(saved).toBe(readdirSync(path.join(h.dir, 'inbox')).filter((n) => n.endsWith('.xml')).length);
  });
});
