/**
 * SFTP folder options through the whole agent (ssh2 test server over temp folders, real sandbox,
 * real journal): done markers, payload-pdf sidecars that travel with their PDF, delete after success.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { makePdf } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { useFaultServerAgent } from './support/fault-agent.js';

const t = useFaultServerAgent('docex-sftp-agent-');

describe('sftp folder options', () => {
  it('waits for the done marker, then archives the file with its marker beside it', async () => {
    const agent = await t.env.start(
      t.env.config({}, { stability: { kind: 'done-marker', suffixes: ['.done'] } }),
    );
    t.env.drop('marked.pdf', await makePdf('marked'));
    // Several polls without the marker: nothing is taken.
    const listings = t.server.stats.listings;
    await waitFor(() => t.server.stats.listings >= listings + 3);
    expect(t.env.remoteFiles()).toEqual(['marked.pdf']);
    expect((await agent.journal.stats()).files.claimed).toBe(0);
    t.env.drop('marked.pdf.done', '');
    await waitFor(() => t.env.archived().includes(path.join(t.day(), 'marked.pdf')), 15_000);
    await waitFor(() => t.env.archived().length === 2);
    expect(t.env.archived()).toEqual([
      path.join(t.day(), 'marked.pdf'),
      path.join(t.day(), 'marked.pdf.done'),
    ]);
    expect(t.env.remoteFiles()).toEqual([]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    expect(await t.env.jobsFor('marked.pdf')).toBe(1);
  });

  it('sends a payload-pdf PDF with its JSON sidecar and moves both to the remote archive', async () => {
    const samples = path.join('samples', 'payload-pdf-print');
    const pdf = readFileSync(path.join(samples, 'letter-with-payment.pdf'));
    const json = readFileSync(path.join(samples, 'letter-with-payment.json'));
    await t.env.start(t.env.config({}, { workflowId: SEED.workflows.payloadPdfPrint }));
    t.env.drop('letter-with-payment.json', json);
    t.env.drop('letter-with-payment.pdf', pdf);
    await waitFor(() => t.env.archived().length === 2, 15_000);
    expect(t.env.archived()).toEqual([
      path.join(t.day(), 'letter-with-payment.json'),
      path.join(t.day(), 'letter-with-payment.pdf'),
    ]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    expect(t.env.refused()).toEqual([]);
    expect(await t.env.jobsFor('letter-with-payment.pdf')).toBe(1);
  });

  it('fetches a sidecar again when its download broke after the claim (its PDF does not wait for ever)', async () => {
    const samples = path.join('samples', 'payload-pdf-print');
    const pdf = readFileSync(path.join(samples, 'letter-with-payment.pdf'));
    const json = readFileSync(path.join(samples, 'letter-with-payment.json'));
    await t.env.start(t.env.config({}, { workflowId: SEED.workflows.payloadPdfPrint }));
    // Twice: the transport's own retry of a broken download fails too.
    t.server.knobs.dropOnOpen = new Map([['letter-retried.json', 2]]);
    const jobsBefore = await t.env.jobsFor('letter-with-payment.pdf');
    t.env.drop('letter-retried.json', json);
    t.env.drop('letter-retried.pdf', pdf);
    await waitFor(() => t.env.archived().filter((f) => f.includes('letter-retried')).length === 2, 15_000);
    expect(t.server.knobs.dropOnOpen.get('letter-retried.json')).toBe(0);
    expect(t.env.h.logs.some((l) => l.msg === 'taking a claimed sidecar again')).toBe(true);
    expect(t.env.archived().filter((f) => f.includes('letter-retried'))).toEqual([
      path.join(t.day(), 'letter-retried.json'),
      path.join(t.day(), 'letter-retried.pdf'),
    ]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    // The sidecar names the job's file: one job more under that name than before the drop.
    expect(await t.env.jobsFor('letter-with-payment.pdf')).toBe(jobsBefore + 1);
  });

  it('refuses the same content dropped again under another name (duplicate) into the remote error folder', async () => {
    const agent = await t.env.start();
    const pdf = await makePdf('sent once only');
    t.env.drop('first.pdf', pdf);
    await waitFor(() => t.env.archived().includes(path.join(t.day(), 'first.pdf')), 15_000);
    t.env.drop('again.pdf', pdf);
    await waitFor(() => t.env.refused().includes('again.pdf'), 15_000);
    const record = JSON.parse(
      readFileSync(path.join(t.env.remote, '.error', 'again.pdf.error.json'), 'utf8'),
    );
    expect(record.code).toBe('DOCEX_DUPLICATE');
    expect(await t.env.jobsFor('first.pdf')).toBe(1);
    expect(await t.env.jobsFor('again.pdf')).toBe(0);
    expect((await agent.journal.stats()).files).toMatchObject({ done: 1, rejected: 1 });
  });

  it('deletes the remote file after success when afterSuccess is delete', async () => {
    const agent = await t.env.start(t.env.config({ afterSuccess: 'delete' }));
    t.env.drop('gone.pdf', await makePdf('delete me after'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 1, 15_000);
    await waitFor(() => t.env.remoteFiles('.processing').length === 0);
    expect(t.env.remoteFiles()).toEqual([]);
    expect(t.env.archived()).toEqual([]);
    expect(await t.env.jobsFor('gone.pdf')).toBe(1);
    // The server drops the file before the agent hears back and logs it.
    await waitFor(() => t.env.h.logs.some((l) => l.msg === 'remote file removed' && l.file === 'gone.pdf'));
  });
});
