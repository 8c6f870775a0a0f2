/**
 * A folder's send window against the sandbox: outside it files are taken and checked at once, no
 * job is created; the shared fake clock moved across the opening releases them. The clock is set
 * forward to the nights before the 2027 spring (28 March) and fall (31 October) changes of Europe/Brussels, so the opening
 * the agent waits for is the one after a daylight-saving change.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { formatItem } from '../../src/cli/status-runner.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, makePdf, useHarness } from './support/agent-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

const WINDOW = { days: 'Mon-Sun', from: '07:00', to: '20:00', timeZone: 'Europe/Brussels' };

/** Moves the shared clock (agent and sandbox) forward to `iso`. */
async function moveTo(iso: string): Promise<void> {
  const ms = Date.parse(iso) - h.clock.now();
  expect(ms).toBeGreaterThanOrEqual(0);
  await h.advance(ms);
}

const fileItem = async (agent: Agent, folder: string, name: string) =>
  (await agent.journal.byPath(path.join(h.folderPath(folder), name)))[0];

const jobsFor = async (filename: string) => (await h.jobs()).filter((j) => j.filename === filename);

/** Log lines with this message so far. */
const linesSaying = (message: string) => h.logs.filter((l) => l['msg'] === message).length;

/** Resolves once the folder has looked at its closed window again after now (the clock was moved). */
async function windowLookedAt(): Promise<void> {
  const before = linesSaying('send window still closed');
  await waitFor(() => linesSaying('send window still closed') > before);
}

describe('send window (folder window)', () => {
  it('holds a checked single file without a job until the window opens after the spring change, then creates and uploads it', async () => {
    // Saturday 27 March 2027, 20:30 CET: closed. Sunday opens at 07:00 CEST = 05:00Z.
    await moveTo('2027-03-27T19:30:00Z');
    const agent = await h.startAgent(
      h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail, window: WINDOW }]),
    );
    h.drop('pdf', 'night.pdf', await makePdf('night'));
    const held = await waitFor(async () => {
      const item = await fileItem(agent, 'pdf', 'night.pdf');
      return item?.lastFailureCode === 'DOCEX_SEND_WINDOW_CLOSED' ? item : undefined;
    });
    // Checked at once (validated), no intent, no job; the opening recorded as its next try.
    expect(held).toMatchObject({ state: 'validated', nextTryAt: Date.parse('2027-03-28T05:00:00Z') });
    expect(formatItem(held, [])).toContain('  waits: send window closed until 2027-03-28T05:00:00.000Z\n');
    expect(await jobsFor('night.pdf')).toEqual([]);

    // A minute before the opening (06:59 CEST, after the change): still no job.
    await moveTo('2027-03-28T04:59:00Z');
    await windowLookedAt();
    expect(await jobsFor('night.pdf')).toEqual([]);
    expect((await fileItem(agent, 'pdf', 'night.pdf'))?.state).toBe('validated');

    await moveTo('2027-03-28T05:00:00Z');
    await waitFor(async () => (await fileItem(agent, 'pdf', 'night.pdf'))?.state === 'done');
    const jobs = await jobsFor('night.pdf');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ uploadedSize: expect.any(Number) });
    // Done: nothing says it waits any more.
    expect(formatItem((await fileItem(agent, 'pdf', 'night.pdf'))!, [])).not.toContain('waits:');
  });

  it('refuses a bad file at once outside the window and holds a good payload-word file with its rows recorded', async () => {
    // Saturday 30 October 2027, 21:00 CEST: closed. Sunday 31 October (the fall change) opens at
    // 07:00 CET = 06:00Z.
    await moveTo('2027-10-30T19:00:00Z');
    const agent = await h.startAgent(
      h.config([
        {
          name: 'letters',
          workflowId: SEED.workflows.payloadWordEmail,
          mode: 'payload-word',
          window: WINDOW,
        },
      ]),
    );
    h.drop('letters', 'bad.csv', 'EMAIL_ADDRESS;data.name\r\nok@example.com;Ok\r\n;Nobody\r\n');
    h.drop('letters', 'good.csv', 'EMAIL_ADDRESS;data.name\r\na@example.com;Ann\r\nb@example.com;Bob\r\n');
    const errorDir = path.join(h.dir, 'error', 'letters');
    await waitFor(() => listFiles(errorDir).includes('bad.csv.error.txt'));
    expect(readFileSync(path.join(errorDir, 'bad.csv.error.txt'), 'utf8')).toMatch(/row 3: rule 7/);
    const good = await waitFor(async () => {
      const item = await fileItem(agent, 'letters', 'good.csv');
      return item?.lastFailureCode === 'DOCEX_SEND_WINDOW_CLOSED' ? item : undefined;
    });
    expect(good.nextTryAt).toBe(Date.parse('2027-10-31T06:00:00Z'));
    expect((await agent.journal.rowsOf(good.id)).map((r) => r.state)).toEqual(['validated', 'validated']);
    expect(await jobsFor('good.csv')).toEqual([]);

    await moveTo('2027-10-31T06:00:00Z');
    await waitFor(async () => (await fileItem(agent, 'letters', 'good.csv'))?.state === 'done');
    const rows = await agent.journal.rowsOf(good.id);
    expect(rows.map((r) => r.state)).toEqual(['done', 'done']);
    expect((await h.jobs()).filter((j) => rows.some((r) => r.jobId === j.id))).toHaveLength(2);
  });

  it('keeps holding a file after a restart and releases it at the opening', async () => {
    // Sunday 31 October 2027, 20:30 CET (after the fall change): closed until Monday 06:00Z.
    await moveTo('2027-10-31T19:30:00Z');
    const config = h.config([{ name: 'restart', workflowId: SEED.workflows.pdfEmail, window: WINDOW }]);
    const first = await h.startAgent(config);
    h.drop('restart', 'late.pdf', await makePdf('late'));
    await waitFor(
      async () =>
        (await fileItem(first, 'restart', 'late.pdf'))?.lastFailureCode === 'DOCEX_SEND_WINDOW_CLOSED',
    );
    await first.stop();

    const holds = linesSaying('file waits: send window closed');
    const second = await h.startAgent(config);
    await waitFor(() => linesSaying('file waits: send window closed') > holds);
    expect(await jobsFor('late.pdf')).toEqual([]);
    expect(await fileItem(second, 'restart', 'late.pdf')).toMatchObject({
      state: 'validated',
      nextTryAt: Date.parse('2027-11-01T06:00:00Z'),
    });

    await moveTo('2027-11-01T06:00:00Z');
    await waitFor(async () => (await fileItem(second, 'restart', 'late.pdf'))?.state === 'done');
    expect(await jobsFor('late.pdf')).toHaveLength(1);
  });
});
