/**
 * Scheduled sending against the sandbox: a payload-word folder's `sendAt` rule and a row's own
 * `executionDate` reach the job as sendingEventExecutionDateUtc, a past date refuses its row, and
 * the sandbox starts the sending event only when its moved clock reaches that date.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, useHarness } from './support/agent-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

interface Event {
  businessStatus: string;
  executionDateUtc: string | null;
  taskDetails: { startedAt: string | null }[];
}

const eventOf = async (jobId: string): Promise<Event> =>
  (await h.sandbox.api('GET', `/sending-events?jobId=${jobId}`)).body.items[0];

describe('scheduled sending (sendAt, executionDate)', () => {
  it('sends rows at the folder’s next 09:00 or at their own executionDate, and refuses a row whose date is past', async () => {
    // Friday 15 January 2027, 11:30 CET.
    await h.advance(Date.parse('2027-01-15T10:30:00Z') - h.clock.now());
    const agent = await h.startAgent(
      h.config([
        {
          name: 'letters',
          workflowId: SEED.workflows.payloadWordEmail,
          mode: 'payload-word',
          onInvalidRow: 'skip',
          sendAt: { at: '09:00', days: 'Mon-Fri', timeZone: 'Europe/Brussels' },
        },
      ]),
    );
    h.drop(
      'letters',
      'scheduled.csv',
      'EMAIL_ADDRESS;executionDate\r\n' +
        'monday@example.com;\r\n' +
        'afternoon@example.com;2027-01-15T14:00:00+01:00\r\n' +
        'morning@example.com;2027-01-15T09:00:00+01:00\r\n',
    );
    const file = async () =>
      (await agent.journal.byPath(path.join(h.folderPath('letters'), 'scheduled.csv')))[0];
    await waitFor(async () => (await file())?.state === 'done');
    const rows = await agent.journal.rowsOf((await file())!.id);
    expect(rows.map((r) => r.state)).toEqual(['done', 'done', 'rejected']);
    expect(rows[2]).toMatchObject({ rejectCode: 'DOCEX_INPUT_EXECUTION_DATE' });
    expect(rows[2]?.rejectReason).toContain(
      '(column executionDate): 2027-01-15T08:00:00.000Z is not later than',
    );

    const monday = await waitFor(() => eventOf(rows[0]!.jobId!));
    const afternoon = await waitFor(() => eventOf(rows[1]!.jobId!));
    // No date in the row: the folder's next 09:00 on a weekday, Monday 18 January (CET).
    expect(monday.executionDateUtc).toBe('2027-01-18T08:00:00.000Z');
    expect(afternoon.executionDateUtc).toBe('2027-01-15T13:00:00.000Z');

    // A minute before 14:00 CET nothing has started; at 14:00 the afternoon row's tasks start.
    await h.advance(Date.parse('2027-01-15T12:59:00Z') - h.clock.now());
    expect(await eventOf(rows[1]!.jobId!)).toMatchObject({ businessStatus: 'SCHEDULED_FOR_EXECUTION' });
    await h.advance(60_000);
    const started = await eventOf(rows[1]!.jobId!);
    expect(started.businessStatus).toBe('IN_PROGRESS');
    expect(started.taskDetails[0]?.startedAt).toBe('2027-01-15T13:00:00.000Z');
    expect(await eventOf(rows[0]!.jobId!)).toMatchObject({ businessStatus: 'SCHEDULED_FOR_EXECUTION' });
  });

  it('gives a payload-pdf job the folder’s fixed delay after its create, as the sandbox shows on its event', async () => {
    const agent = await h.startAgent(
      h.config([
        {
          name: 'delayed',
          workflowId: SEED.workflows.payloadPdfPrint,
          mode: 'payload-pdf',
          sendAt: { delay: '2h' },
        },
      ]),
    );
    const sidecar = JSON.parse(readFileSync('samples/payload-pdf-print/letter-with-payment.json', 'utf8'));
    h.drop('delayed', 'later.json', JSON.stringify({ ...sidecar, filename: 'later.pdf' }));
    h.drop('delayed', 'later.pdf', readFileSync('samples/payload-pdf-print/letter-with-payment.pdf'));
    const item = async () => (await agent.journal.byPath(path.join(h.folderPath('delayed'), 'later.pdf')))[0];
    await waitFor(async () => (await item())?.state === 'done');
    const row = (await agent.journal.rowsOf((await item())!.id))[0]!;
    const event = await waitFor(() => eventOf(row.jobId!));
    // The clock stood still while the agent ran: the create was at the clock's now.
    expect(event.executionDateUtc).toBe(new Date(h.clock.now() + 2 * 3_600_000).toISOString());
  });
});
