/**
 * Routes with modes of their own, against the sandbox, on a SQLite and on a PostgreSQL journal: one
 * folder sends its PDFs one job each and its CSV lists one job a row, each file in its route's mode
 * to its route's workflow (with the route's own row options); the mode is recorded at the claim,
 * and a restart drives the file in that mode though the routes changed since.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { AgentConfigInput } from '../../src/config/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { describePostgres, startPostgresServer, type TestPostgresServer } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, makeHarness, makePdf, md5 } from './support/agent-harness.js';

/** The rows of the list: the second has no address, which its route's onInvalidRow skips. */
const LIST = 'Mail;data.name\r\na@example.com;Ann\r\n;Nobody\r\nb@example.com;Bob\r\n';

function routeModeTests(journal: () => Promise<Partial<AgentConfigInput>>, getHarness: () => Harness) {
  let n = 0;
  const fileItem = async (agent: Agent, folder: string, name: string) =>
    (await agent.journal.byPath(path.join(getHarness().folderPath(folder), name)))[0];
  const jobsOf = async (part: string) =>
    (await getHarness().jobs()).filter((j) => j.filename === part || j.name.startsWith(part));

  it('sends a PDF as one single-file job and a CSV as one payload-word job a row, each to its route’s workflow, from one folder', async () => {
    const h = getHarness();
    const folder = `modes-${++n}`;
    const agent = await h.startAgent(
      h.config(
        [
          {
            name: folder,
            workflowId: SEED.workflows.pdfEmail,
            routes: [
              {
                match: '*.csv',
                workflowId: SEED.workflows.payloadWordEmail,
                mode: 'payload-word',
                mapping: { csv: { columns: { Mail: 'EMAIL_ADDRESS' } } },
                onInvalidRow: 'skip',
              },
              { match: '*.pdf', workflowId: SEED.workflows.pdfPrint },
            ],
          },
        ],
        await journal(),
      ),
    );
    const pdf = await makePdf('one letter');
    h.drop(folder, `${folder}-letter.pdf`, pdf);
    h.drop(folder, `${folder}-list.csv`, LIST);
    await waitFor(async () => (await agent.journal.stats()).files.done === 2);

    expect(await fileItem(agent, folder, `${folder}-letter.pdf`)).toMatchObject({
      mode: 'single-file',
      workflowId: SEED.workflows.pdfPrint,
    });
    const letter = await jobsOf(`${folder}-letter.pdf`);
    expect(letter.map((j) => [j.workflowId, j.uploadedMd5])).toEqual([[SEED.workflows.pdfPrint, md5(pdf)]]);

    const list = await fileItem(agent, folder, `${folder}-list.csv`);
    expect(list).toMatchObject({ mode: 'payload-word', workflowId: SEED.workflows.payloadWordEmail });
    const rows = await agent.journal.rowsOf(list!.id);
    expect(rows.map((r) => [r.mode, r.state])).toEqual([
      ['payload-word', 'done'],
      ['payload-word', 'rejected'],
      ['payload-word', 'done'],
    ]);
    const words = await jobsOf(`${folder}-list.csv`);
    expect(words.map((j) => j.workflowId)).toEqual([
      SEED.workflows.payloadWordEmail,
      SEED.workflows.payloadWordEmail,
    ]);
    expect(words.map((j) => j.id).sort()).toEqual(rows.flatMap((r) => r.jobId ?? []).sort());
    await agent.stop();
  });

  it('drives a file after a restart in the mode and to the workflow recorded at its claim, though no route takes its name or names its workflow any more', async () => {
    const h = getHarness();
    const folder = `modes-${++n}`;
    // Today closed (its weekday left out): the list is taken, checked and cut into rows, no job made.
    const today = ((new Date(h.clock.now()).getUTCDay() + 6) % 7) + 1;
    const names = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    const closed = {
      days: names.filter((_, i) => i + 1 !== today),
      from: '00:00',
      to: '24:00',
      timeZone: 'UTC',
    };
    const words = { workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' as const };
    const extra = await journal();
    const first = await h.startAgent(
      h.config(
        [
          {
            name: folder,
            workflowId: SEED.workflows.pdfEmail,
            routes: [{ match: '*.csv', ...words }],
            window: closed,
          },
        ],
        extra,
      ),
    );
    const name = `${folder}-late.csv`;
    h.drop(folder, name, 'EMAIL_ADDRESS;data.name\r\nc@example.com;Cy\r\n');
    await waitFor(
      async () => (await fileItem(first, folder, name))?.lastFailureCode === 'DOCEX_SEND_WINDOW_CLOSED',
    );
    expect(await fileItem(first, folder, name)).toMatchObject({ mode: 'payload-word' });
    expect(await jobsOf(name)).toEqual([]);
    await first.stop();

    // The routes changed meanwhile: none names the list's workflow any more, and the folder's own
    // workflow (single-file, print) would ask its rows for a postal address.
    const second = await h.startAgent(
      h.config(
        [
          {
            name: folder,
            workflowId: SEED.workflows.pdfPrint,
            routes: [{ match: '*.pdf', workflowId: SEED.workflows.pdfPrint }],
          },
        ],
        extra,
      ),
    );
    await waitFor(async () => (await fileItem(second, folder, name))?.state === 'done');
    const jobs = await jobsOf(name);
    expect(jobs.map((j) => j.workflowId)).toEqual([SEED.workflows.payloadWordEmail]);
    await second.stop();
  });
}

describe('routes with their own modes (SQLite journal)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    await h?.stopAgents();
  });
  afterAll(async () => {
    await h?.cleanup();
  });
  routeModeTests(
    async () => ({}),
    () => h,
  );
});

describePostgres('routes with their own modes (PostgreSQL journal)', () => {
  let h: Harness;
  let server: TestPostgresServer;
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
  routeModeTests(
    async () => ({
      journal: {
        url: new URL(await server.createDatabase()).toString(),
        sslmode: 'disable',
        timeoutMs: 2_000,
      },
    }),
    () => h,
  );
});
