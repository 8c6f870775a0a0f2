/**
 * The whole agent on a PostgreSQL journal (journal.url): real sandbox over HTTPS + mTLS, real
 * folders, a real PostgreSQL server of this file's own, which the tests stop and start under the
 * running agent. Exactly once holds across the database's outage: nothing is taken while it does
 * not answer, and every file is taken up again by itself when it does.
 */
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { AgentMetrics, agentView, startOps } from '../../src/ops/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, listFiles, makeHarness, makePdf, md5 } from '../pipeline/support/agent-harness.js';
import { describePostgres, startPostgresServer, type TestPostgresServer } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';

let h: Harness;
let server: TestPostgresServer;

describePostgres('the agent on a PostgreSQL journal', () => {
  beforeAll(async () => {
    h = await makeHarness();
    server = await startPostgresServer();
  });
  afterEach(async () => {
    await h?.stopAgents();
  });
  afterAll(async () => {
    await h?.cleanup();
    await server?.destroy();
  });

  async function configOn(folder: string) {
    const url = new URL(await server.createDatabase());
    return h.config([{ name: folder, workflowId: SEED.workflows.pdfEmail }], {
      journal: { url: url.toString(), sslmode: 'disable', timeoutMs: 2_000 },
    });
  }

  const jobsOf = async (file: string) => (await h.jobs()).filter((j) => j.filename === file);

  it('takes a PDF to one uploaded job, and a restarted agent refuses the same content as a duplicate', async () => {
    const config = await configOn('pg-once');
    const first = await h.startAgent(config);
    const pdf = await makePdf('journal on postgres');
    h.drop('pg-once', 'a.pdf', pdf);
    await waitFor(async () => (await first.journal.stats()).files.done === 1);
    expect(first.journal.location).toMatch(/^postgres:\/\/.*127\.0\.0\.1/);
    await h.stopAgents();

    const second = await h.startAgent(config);
    h.drop('pg-once', 'again.pdf', pdf);
    await waitFor(async () => (await second.journal.stats()).files.rejected === 1);
    const [refused] = await second.journal.byPath(`${h.folderPath('pg-once')}/again.pdf`);
    expect(refused).toMatchObject({ state: 'rejected', rejectCode: 'DOCEX_DUPLICATE' });
    const jobs = await jobsOf('a.pdf');
    expect(jobs.map((j) => j.uploadedMd5)).toEqual([md5(pdf)]);
    expect(await jobsOf('again.pdf')).toEqual([]);
  });

  it('takes no file while the database is down, and every file exactly once when it is back', async () => {
    const config = await configOn('pg-outage');
    const agent = await h.startAgent(config);
    const before = await makePdf('before the outage');
    h.drop('pg-outage', 'before.pdf', before);
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);

    await server.stop();
    const during = await Promise.all([1, 2, 3].map((n) => makePdf(`during the outage ${n}`)));
    for (const [i, pdf] of during.entries()) h.drop('pg-outage', `during-${i}.pdf`, pdf);
    await waitFor(() => agent.pipeline.journalDown, 15_000);
    expect(h.logs.some((l) => l['msg'] === 'journal not answering: no new files taken until it does')).toBe(
      true,
    );
    await server.start();

    await waitFor(async () => (await agent.journal.stats()).files.done === 4, 30_000);
    expect(agent.pipeline.journalDown).toBe(false);
    for (const [i, pdf] of during.entries()) {
      const jobs = await jobsOf(`during-${i}.pdf`);
      expect(jobs.map((j) => j.uploadedMd5)).toEqual([md5(pdf)]);
    }
    expect((await jobsOf('before.pdf')).length).toBe(1);
    expect(listFiles(`${h.folderPath('pg-outage')}/.processing`)).toEqual([]);
    expect(h.logs.some((l) => l['msg'] === 'journal answers again: intake resumed')).toBe(true);
  }, 60_000);

  it('answers /readyz 503 naming the database while it is down, without its password, and 200 again after', async () => {
    const config = await configOn('pg-ready');
    const withPassword = { ...config, journal: { ...config.journal, password: 'not-needed-but-secret' } };
    const agent = await h.startAgent(withPassword);
    const ops = await startOps({
      config: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, metrics: true },
      log: silentLogger(),
      metrics: new AgentMetrics({ processMetrics: false }),
      checkTimeoutMs: 3_000,
    });
    try {
      ops.attach(agentView(agent, withPassword, h.clock));
      const ready = async () => {
        const res = await fetch(`${ops.url}/readyz`);
        return { status: res.status, text: await res.text() };
      };
      expect((await ready()).status).toBe(200);
      h.drop('pg-ready', 'first.pdf', await makePdf('ready'));
      await waitFor(async () => (await agent.journal.stats()).files.done === 1);
      const metrics = await (await fetch(`${ops.url}/metrics`)).text();
      expect(metrics).toMatch(/docex_files_taken_total\{folder="pg-ready"\} 1/);
      // Its own heartbeat, written at start: one agent alive on this journal.
      expect(metrics).toMatch(/^docex_agents_alive 1$/m);
      expect((await agent.cluster.agents()).map((a) => [a.pid, a.status])).toEqual([[process.pid, 'alive']]);

      await server.stop();
      const down = await ready();
      expect(down.status).toBe(503);
      const { checks } = JSON.parse(down.text) as {
        checks: Record<string, { ok: boolean; detail?: string }>;
      };
      const journal = checks['journal'];
      expect(journal).toMatchObject({ ok: false });
      expect(journal?.detail).toContain(`postgres://${server.superuser}@127.0.0.1:${server.port}/`);
      expect(down.text).not.toContain('not-needed-but-secret');
      await server.start();
      await waitFor(async () => ((await ready()).status === 200 ? true : undefined), 15_000);
    } finally {
      await ops.stop();
    }
  }, 60_000);
});
