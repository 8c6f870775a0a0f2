/**
 * A running agent against files meant to kill, freeze or steer it (issue 16): each is refused into
 * the error folder with a reason, and the agent goes on taking good files.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentView, startOps } from '../../src/ops/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { pageTreeBombPdf } from '../fixtures/inputs/hostile.js';
import { waitFor } from '../support/wait-for.js';
import { clientWith, type Harness, listFiles, makeHarness, makePdf } from './support/agent-harness.js';

let h: Harness;

beforeAll(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.stopAgents();
});
afterAll(async () => {
  await h.cleanup();
});

const errorRecord = (folder: string, file: string) =>
  JSON.parse(readFileSync(path.join(h.dir, 'error', folder, `${file}.error.json`), 'utf8'));

describe('hostile files against a running agent', () => {
  it('refuses a 2^64-page tree PDF and a CSV over the inspection memory, then sends a good PDF', {
    timeout: 90_000,
  }, async () => {
    const agent = await h.startAgent(
      h.config(
        [
          { name: 'pdf', workflowId: SEED.workflows.pdfEmail },
          { name: 'data', workflowId: SEED.workflows.dataFile },
        ],
        { inspection: { memory: '32MiB', workers: 1 }, maxFileBytes: '64MiB' },
      ),
    );
    h.drop('pdf', 'tree.pdf', pageTreeBombPdf(64));
    h.drop('data', 'rows.csv', `a,b\n${'1,2\n'.repeat(3_000_000)}`);
    await waitFor(() => listFiles(path.join(h.dir, 'error', 'pdf')).includes('tree.pdf.error.json'), 30_000);
    // Parsing until the worker's heap is full takes seconds on a loaded machine.
    await waitFor(() => listFiles(path.join(h.dir, 'error', 'data')).includes('rows.csv.error.json'), 60_000);
    expect(errorRecord('pdf', 'tree.pdf')).toMatchObject({ code: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(errorRecord('data', 'rows.csv')).toMatchObject({
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason: expect.stringContaining('(inspection.memory)'),
    });

    h.drop('pdf', 'good.pdf', await makePdf('after the hostile ones'));
    await waitFor(
      async () =>
        (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'good.pdf')))[0]?.state === 'done',
    );
  });

  it('stops a folder whose .error is a symbolic link at start, and runs the others', async () => {
    const outside = path.join(h.dir, 'outside-start');
    mkdirSync(outside, { recursive: true });
    mkdirSync(h.folderPath('linked'), { recursive: true });
    const errorDir = path.join(h.folderPath('linked'), '.error');
    symlinkSync(outside, errorDir);
    const agent = await h.startAgent(
      h.config([
        { name: 'linked', workflowId: SEED.workflows.pdfEmail, errorDir },
        { name: 'fine', workflowId: SEED.workflows.pdfEmail },
      ]),
    );
    expect(agent.stoppedFolders).toEqual([
      {
        name: 'linked',
        workflowId: SEED.workflows.pdfEmail,
        code: 'DOCEX_FOLDER_UNSAFE',
        reason: `${errorDir} is a symbolic link; the agent writes only into real directories. Replace it with a directory.`,
      },
    ]);
    h.drop('fine', 'fine.pdf', await makePdf('fine'));
    await waitFor(
      async () =>
        (await agent.journal.byPath(path.join(h.folderPath('fine'), 'fine.pdf')))[0]?.state === 'done',
      30_000,
    );
  });

  it.each([
    { dir: '.processing', drop: 'good', stuck: 'drop folder' },
    { dir: '.archive', drop: 'good', stuck: 'uploaded' },
    { dir: '.error', drop: 'broken', stuck: 'rejected' },
  ] as const)(
    'stops a folder whose $dir is swapped for a symbolic link while running, reports it in /readyz, writes nothing through the link, and finishes the file once restarted on a real folder',
    async ({ dir, drop, stuck }) => {
      const name = `swapped${dir.replace('.', '-')}`;
      const root = h.folderPath(name);
      const linked = path.join(root, dir);
      const outside = path.join(h.dir, `outside${dir.replace('.', '-')}`);
      mkdirSync(outside, { recursive: true });
      const config = h.config([
        {
          name,
          workflowId: SEED.workflows.pdfEmail,
          archiveDir: path.join(root, '.archive'),
          errorDir: path.join(root, '.error'),
        },
      ]);
      // No rescans: the writes find the link (a scan's finding is pinned in local-source-rules).
      const agent = await h.startAgent(config, {
        source: { statIntervalMs: 10, rescanIntervalMs: 0, watch: true },
      });
      const ops = await startOps({
        config: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, metrics: false },
        log: h.log,
      });
      ops.attach(agentView(agent, config, h.clock));
      try {
        rmSync(linked, { recursive: true });
        symlinkSync(outside, linked);
        const content = drop === 'good' ? await makePdf(`swapped ${dir}`) : '%PDF-1.7\nnot a pdf';
        h.drop(name, 'file.pdf', content);

        const stopped = await waitFor(() => agent.stoppedFolders.find((f) => f.name === name), 30_000);
        expect(stopped).toEqual({
          name,
          workflowId: SEED.workflows.pdfEmail,
          code: 'DOCEX_FOLDER_UNSAFE',
          reason: `${linked} is a symbolic link; the agent writes only into real directories. Replace it with a directory.`,
        });
        const ready = await fetch(`${ops.url}/readyz`);
        expect(ready.status).toBe(503);
        const report = (await ready.json()) as { checks: Record<string, { ok: boolean; detail?: string }> };
        expect(report.checks['stoppedFolders']).toMatchObject({
          ok: false,
          detail: `${name}: DOCEX_FOLDER_UNSAFE: ${stopped.reason}`,
        });
        // Its source and work end: nothing of the folder stays running.
        await waitFor(() => !agent.plan.running.has(name));
        expect(listFiles(outside)).toEqual([]);
        const item = (await agent.journal.byPath(path.join(root, 'file.pdf')))[0];
        if (stuck === 'drop folder') {
          expect(item).toBeUndefined();
          expect(existsSync(path.join(root, 'file.pdf'))).toBe(true);
        } else {
          expect(item?.state).toBe(stuck);
          expect(listFiles(path.join(root, '.processing'))).toEqual(['file.pdf']);
        }
      } finally {
        await ops.stop();
      }

      // The operator puts a real folder back and restarts: the file ends where it should, sent once.
      await h.stopAgents();
      rmSync(linked);
      mkdirSync(linked);
      const again = await h.startAgent(config);
      expect(again.stoppedFolders).toEqual([]);
      const end = drop === 'good' ? 'done' : 'rejected';
      await waitFor(
        async () =>
          (await again.journal.byPath(path.join(root, 'file.pdf')))[0]?.state === end &&
          listFiles(path.join(root, drop === 'good' ? '.archive' : '.error')).length > 0,
        30_000,
      );
      const jobId = (await again.journal.byPath(path.join(root, 'file.pdf')))[0]!.jobId;
      if (drop === 'good') {
        expect((await h.jobs()).filter((j) => j.id === jobId && j.uploadedMd5 !== null)).toHaveLength(1);
      }
      expect(listFiles(outside)).toEqual([]);
    },
  );

  it('refuses a file over 1 MiB rewritten with the same size and mtime between its hash and its upload, never sending it whole', async () => {
    const pdf = await makePdf('hashed, then rewritten', { padBytes: 1536 * 1024 });
    const pad = pdf.indexOf('aaaaaaaa');
    const claimed = path.join(h.folderPath('rewritten'), '.processing', 'big.pdf');
    const rewriting = clientWith(h.client, (real) => ({
      // After the claim's hash, before the upload: the same size and mtime, other bytes.
      createSingleFile: async (request, opts) => {
        const { atimeMs, mtimeMs } = statSync(claimed);
        const other = Buffer.from(pdf);
        other.fill('b', pad, pad + 1024 * 1024);
        writeFileSync(claimed, other);
        utimesSync(claimed, atimeMs / 1000, mtimeMs / 1000);
        return real.createSingleFile(request, opts);
      },
    }));
    const agent = await h.startAgent(h.config([{ name: 'rewritten', workflowId: SEED.workflows.pdfEmail }]), {
      client: rewriting,
    });
    h.drop('rewritten', 'big.pdf', pdf);
    await waitFor(
      () => listFiles(path.join(h.dir, 'error', 'rewritten')).includes('big.pdf.error.json'),
      30_000,
    );
    const record = errorRecord('rewritten', 'big.pdf');
    expect(record.code).toBe('DOCEX_SOURCE_CHANGED');
    expect(record.reason).toMatch(/content changed after it was taken/);
    const item = (await agent.journal.byPath(path.join(h.folderPath('rewritten'), 'big.pdf')))[0];
    expect(item?.state).toBe('rejected');
    const job = (await h.jobs()).find((j) => j.id === item?.jobId);
    expect(job?.uploadedMd5).toBeNull();
    expect(listFiles(path.join(h.dir, 'archive', 'rewritten'))).toEqual([]);
  });

  it('refuses a payload-pdf sidecar over inspection.limits.sidecarBytes without reading it whole', async () => {
    const agent = await h.startAgent(
      h.config([{ name: 'letters', workflowId: SEED.workflows.payloadPdfPrint, mode: 'payload-pdf' }]),
    );
    const big = JSON.stringify({ templateData: { blob: 'x'.repeat(2 * 1024 * 1024) } });
    h.drop('letters', 'letter.json', big);
    h.drop('letters', 'letter.pdf', await makePdf('letter'));
    await waitFor(
      () => listFiles(path.join(h.dir, 'error', 'letters')).includes('letter.pdf.error.json'),
      30_000,
    );
    expect(errorRecord('letters', 'letter.pdf')).toMatchObject({
      code: 'DOCEX_INPUT_TOO_COMPLEX',
      reason: 'letter.json is larger than 1 MiB (inspection.limits.sidecarBytes); nothing was sent',
    });
    expect(
      (await agent.journal.byPath(path.join(h.folderPath('letters'), 'letter.pdf')))[0]?.jobId,
    ).toBeUndefined();
  });
});
