/**
 * SFTP folders against a misbehaving server (ssh2's server side over temp folders, see
 * support/fault-server.ts), through the whole agent: real sandbox over HTTPS + mTLS, real journal.
 * In every case a file ends in the remote archive or the remote error folder exactly once, and a
 * good file becomes exactly one job.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePdf, md5 } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { useFaultServerAgent } from './support/fault-agent.js';
import { FOLDER } from './support/sftp-agent.js';

const t = useFaultServerAgent('docex-sftp-fault-');

/** A PDF big enough to need many READ requests. */
async function bigPdf(text: string): Promise<Buffer> {
  const pdf = await makePdf(text);
  // A comment block before the trailer keeps the PDF valid while making it ~600 KiB.
  const eof = pdf.lastIndexOf('%%EOF');
  const pad = Buffer.from(`%${'x'.repeat(1022)}\n`.repeat(600));
  return Buffer.concat([pdf.subarray(0, eof), pad, pdf.subarray(eof)]);
}

async function expectArchivedOnce(name: string, content: Buffer): Promise<void> {
  await waitFor(() => t.env.archived().includes(path.join(t.day(), name)), 15_000);
  await waitFor(async () => (await t.env.jobsFor(name)) === 1);
  // md5s, not the buffers: a deep comparison of 600 KiB takes seconds.
  expect(md5(readFileSync(path.join(t.env.remote, '.archive', t.day(), name)))).toBe(md5(content));
  expect(t.env.archived()).toEqual([path.join(t.day(), name)]);
  expect(t.env.remoteFiles()).toEqual([]);
  expect(t.env.remoteFiles('.processing')).toEqual([]);
  expect(t.env.refused()).toEqual([]);
  const jobs = (await t.env.h.jobs()).filter((j) => j.filename === name);
  expect(jobs).toHaveLength(1);
  expect(jobs[0]).toMatchObject({ uploadedMd5: md5(content), uploadedSize: content.length });
}

describe('sftp folder source against a faulty server', () => {
  it('takes a complete remote file once: one job, remote file archived, local copy archived', async () => {
    const agent = await t.env.start();
    const pdf = await makePdf('sftp invoice 1');
    t.env.drop('invoice-1.pdf', pdf);
    await expectArchivedOnce('invoice-1.pdf', pdf);
    // The spool copy went through the pipeline's local archive (by default under <stateDir>/sftp/<folder>/archive).
    const local = path.join(t.env.stateDir, 'sftp', FOLDER, 'archive', t.day(), 'invoice-1.pdf');
    await waitFor(() => existsSync(`${local}.result.json`));
    expect(readFileSync(local)).toEqual(pdf);
    const item = (await agent.journal.recent(5)).find((i) => i.fileName === 'invoice-1.pdf');
    expect(item?.sourcePath).toBe(
      `sftp://${t.server.username}@127.0.0.1:${t.server.port}${t.env.remote}/invoice-1.pdf`,
    );
    expect(item?.state).toBe('done');
  });

  it('downloads again after the connection drops in the middle of downloads, and submits once', async () => {
    // Four breaks: the transport retries a broken transfer once itself; a break it gives up on reaches
    // the source, which leaves the file in .processing and takes it again at the next poll.
    t.server.knobs.disconnectAfterBytes = 200 * 1024;
    t.server.knobs.disconnectTimes = 4;
    await t.env.start();
    const pdf = await bigPdf('cut mid-download');
    t.env.drop('cut.pdf', pdf);
    await expectArchivedOnce('cut.pdf', pdf);
    expect(t.server.stats.disconnects).toBe(4);
    expect(t.env.h.logs.filter((l) => l.msg === 'download failed').length).toBeGreaterThanOrEqual(1);
    expect(t.env.h.logs.filter((l) => l.msg === 'taking a claimed file again').length).toBeGreaterThanOrEqual(
      1,
    );
    // Nothing partial is left in the spool.
    expect(readdirSafe(path.join(t.env.stateDir, 'sftp', FOLDER, 'spool', '.processing'))).toEqual([]);
  });

  it("never refuses a file for connection drops, however many: they are the server's fault, not the file's", async () => {
    // 30 breaks: after the transport's own retries, more failures reach the source than the 5 that
    // refuse a file the server will not serve; none of them counts.
    t.server.knobs.disconnectAfterBytes = 200 * 1024;
    t.server.knobs.disconnectTimes = 30;
    await t.env.start();
    const pdf = await bigPdf('cut again and again');
    t.env.drop('cut-often.pdf', pdf);
    await expectArchivedOnce('cut-often.pdf', pdf);
    expect(t.server.stats.disconnects).toBe(30);
    const failed = t.env.h.logs.filter((l) => l.msg === 'download failed');
    expect(failed.length).toBeGreaterThanOrEqual(5);
    expect(failed.every((l) => l['code'] === 'DOCEX_SFTP_CONNECT' && l['counted'] === false)).toBe(true);
  });

  it('keeps polling while a very slow download runs, and takes the file once', async () => {
    t.server.knobs.readDelayMs = 250;
    await t.env.start();
    const pdf = await bigPdf('slow server');
    t.env.drop('slow.pdf', pdf);
    await waitFor(() => t.env.h.logs.some((l) => l.msg === 'file claimed'));
    const listingsAtClaim = t.server.stats.listings;
    await waitFor(() => t.env.h.logs.some((l) => l.msg === 'file downloaded'), 15_000);
    // Polls went on during the download (downloads run beside them) without taking the file again.
    expect(t.server.stats.listings - listingsAtClaim).toBeGreaterThanOrEqual(2);
    await expectArchivedOnce('slow.pdf', pdf);
    expect(t.env.h.logs.filter((l) => l.msg === 'file claimed')).toHaveLength(1);
    expect(t.env.h.logs.filter((l) => l.msg === 'file downloaded')).toHaveLength(1);
  });

  it('falls back to a journal-only claim when the server refuses rename, says so once, and never takes the file twice', async () => {
    t.server.knobs.refuseRename = true;
    const agent = await t.env.start();
    const pdf = await makePdf('no rename here');
    t.env.drop('norename.pdf', pdf);
    await waitFor(async () => (await agent.journal.stats()).files.done === 1, 15_000);
    // Once final, the file is removed from the drop folder (there is no way to move it).
    await waitFor(() => t.env.remoteFiles().length === 0);
    const second = await makePdf('no rename, second file');
    t.env.drop('norename-2.pdf', second);
    await waitFor(async () => (await agent.journal.stats()).files.done === 2, 15_000);
    await waitFor(() => t.env.remoteFiles().length === 0);
    // Several more polls (counted by the server, not guessed from a wait): nothing is taken again.
    const listed = t.server.stats.listings;
    await waitFor(() => t.server.stats.listings >= listed + 5);
    expect(await t.env.jobsFor('norename.pdf')).toBe(1);
    expect(await t.env.jobsFor('norename-2.pdf')).toBe(1);
    expect((await agent.journal.stats()).files.done).toBe(2);
    const warnings = t.env.h.logs.filter((l) => l.code === 'DOCEX_SFTP_RENAME_REFUSED');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ folder: FOLDER, level: 40 });
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    // The copies are kept in the local archive.
    const local = path.join(t.env.stateDir, 'sftp', FOLDER, 'archive', t.day());
    expect(readFileSync(path.join(local, 'norename.pdf'))).toEqual(pdf);
  });

  it('refuses a file the server never lets it read into the remote error folder with its .error.json and .error.txt', async () => {
    t.server.knobs.denyOpen = new Set(['locked.pdf']);
    await t.env.start();
    t.env.drop('locked.pdf', await makePdf('locked'));
    // The records are written first, then the file is moved beside them: wait for the whole refusal.
    await waitFor(() => t.env.refused().length === 3, 15_000);
    expect(t.env.refused()).toEqual(['locked.pdf', 'locked.pdf.error.json', 'locked.pdf.error.txt']);
    const reason = readFileSync(path.join(t.env.remote, '.error', 'locked.pdf.error.txt'), 'utf8');
    expect(reason).toContain('DOCEX_SFTP_DOWNLOAD_FAILED');
    expect(reason).toContain('DOCEX_SFTP_PERMISSION');
    const record = JSON.parse(
      readFileSync(path.join(t.env.remote, '.error', 'locked.pdf.error.json'), 'utf8'),
    );
    expect(record).toMatchObject({
      status: 'rejected',
      file: 'locked.pdf',
      code: 'DOCEX_SFTP_DOWNLOAD_FAILED',
    });
    expect(record.reason).toContain('DOCEX_SFTP_PERMISSION');
    expect(t.env.remoteFiles()).toEqual([]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    expect(await t.env.jobsFor('locked.pdf')).toBe(0);
  });

  it('moves a file the pipeline rejects to the remote error folder with its .error.txt and .error.json', async () => {
    await t.env.start();
    t.env.drop('broken.pdf', Buffer.from('this is not a pdf at all\n'));
    await waitFor(() => t.env.refused().includes('broken.pdf'), 15_000);
    expect(t.env.refused()).toEqual(['broken.pdf', 'broken.pdf.error.json', 'broken.pdf.error.txt']);
    const record = JSON.parse(
      readFileSync(path.join(t.env.remote, '.error', 'broken.pdf.error.json'), 'utf8'),
    );
    expect(record).toMatchObject({ status: 'rejected', file: 'broken.pdf', folder: FOLDER });
    expect(record.code).toMatch(/^DOCEX_INPUT_/);
    expect(readFileSync(path.join(t.env.remote, '.error', 'broken.pdf.error.txt'), 'utf8')).toContain(
      record.code,
    );
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    expect(await t.env.jobsFor('broken.pdf')).toBe(0);
  });

  it('refuses to connect once the host key changed, takes nothing, and says why once', async () => {
    const agent = await t.env.start();
    const first = await makePdf('before the key change');
    t.env.drop('before.pdf', first);
    await expectArchivedOnce('before.pdf', first);
    await t.server.restart({ newHostKey: true });
    t.env.drop('after.pdf', await makePdf('after the key change'));
    // Each attempt is refused with the code (the transport's line, then the poll's); the next one
    // comes after the transport's backoff. Two refused attempts seen: the poll said why once.
    const refusedAttempts = () =>
      t.env.h.logs.filter((l) => l.code === 'DOCEX_SFTP_HOST_KEY' && l.msg === 'sftp connection failed')
        .length;
    await waitFor(() => refusedAttempts() >= 2);
    expect(t.env.remoteFiles()).toEqual(['after.pdf']);
    expect(await t.env.jobsFor('after.pdf')).toBe(0);
    expect((await agent.journal.stats()).files.done).toBe(1);
    const refusals = t.env.h.logs.filter(
      (l) => l.code === 'DOCEX_SFTP_HOST_KEY' && l.msg === 'sftp poll failed',
    );
    expect(refusals).toHaveLength(1);
    expect(String(refusals[0]?.err && (refusals[0].err as { message: string }).message)).toContain(
      t.server.fingerprint,
    );
  });

  it('waits while a file grows between listings and sends its final content once', async () => {
    const pdf = await makePdf('growing');
    const file = path.join(t.env.remote, 'growing.pdf');
    writeFileSync(file, pdf);
    t.server.knobs.grow = new Map([[file, { times: 3, chunk: Buffer.from('% more data\n') }]]);
    await t.env.start();
    const final = Buffer.concat([pdf, Buffer.from('% more data\n'.repeat(3))]);
    await expectArchivedOnce('growing.pdf', final);
  });

  it('finishes the remote move at the next poll when the connection drops while archiving', async () => {
    t.server.knobs.dropOnRenameTo = '/.archive/';
    const agent = await t.env.start();
    const pdf = await makePdf('archive interrupted');
    t.env.drop('interrupted.pdf', pdf);
    await expectArchivedOnce('interrupted.pdf', pdf);
    expect(t.server.stats.disconnects).toBe(1);
    expect((await agent.journal.stats()).files.done).toBe(1);
  });

  it('takes again a file found in the remote .processing folder with no journal record (crash after the claim)', async () => {
    mkdirSync(path.join(t.env.remote, '.processing'), { recursive: true });
    const pdf = await makePdf('claimed before a crash');
    writeFileSync(path.join(t.env.remote, '.processing', 'orphan.pdf'), pdf);
    await t.env.start();
    await expectArchivedOnce('orphan.pdf', pdf);
  });
});

function readdirSafe(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}
