import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Workflow } from '../../src/domain/wire.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { LOOKAHEAD } from '../../src/pipeline/scheduler.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
import { waitFor } from '../support/wait-for.js';
import { makePdf } from './support/agent-harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const workflow = {
  id: 'wf',
  inputSource: { type: 'PDF' },
  enabled: true,
  validated: true,
} as unknown as Workflow;

/** Folders of `files` PDFs each; creates block until `release()`, and the most in flight is kept. */
async function blockedCreates(options: {
  folders: string[];
  folderConcurrency: number;
  concurrency: number;
  files: number;
  /** Folder name -> its priority (absent: the schema's default). */
  priorities?: Record<string, number>;
  onBacklog?: (folder: string, full: boolean) => void;
  /** Uploads block too, until `releaseUploads()` (creates are answered at once then). */
  holdUploads?: boolean;
}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-slots-'));
  dirs.push(dir);
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    stateDir: path.join(dir, 'state'),
    folders: options.folders.map((name) => ({
      name,
      source: { type: 'local', path: path.join(dir, name) },
      workflowId: 'wf',
      concurrency: options.folderConcurrency,
      ...(options.priorities?.[name] === undefined ? {} : { priority: options.priorities[name] }),
    })),
  });
  const journal = SqliteJournal.open(path.join(dir, 'state', 'j.sqlite'), {
    clock: new ManualClock(),
    log: silentLogger(),
  });
  /** `order`: the file name of each create, as the creates came. */
  const seen = {
    inFlight: 0,
    maxInFlight: 0,
    creates: 0,
    order: [] as string[],
    uploadsInFlight: 0,
    maxUploadsInFlight: 0,
  };
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => {
    release = r;
  });
  if (options.holdUploads) release();
  let releaseUploads: () => void = () => {};
  const uploadGate = options.holdUploads
    ? new Promise<void>((r) => {
        releaseUploads = r;
      })
    : Promise.resolve();
  const jobs = {
    createSingleFile: async (request: { filename: string }) => {
      seen.order.push(request.filename);
      seen.creates++;
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      await gate;
      seen.inFlight--;
      return {
        id: `job_${seen.creates}`,
        fileUploadUrl: 'https://files.invalid/u?sig=x',
        uploadExpiresAt: '2099-01-01T00:00:00.000Z',
      };
    },
    uploadFile: async () => {
      seen.uploadsInFlight++;
      seen.maxUploadsInFlight = Math.max(seen.maxUploadsInFlight, seen.uploadsInFlight);
      await uploadGate;
      seen.uploadsInFlight--;
      return { md5: 'm', size: 1 };
    },
  } as unknown as PipelineJobs;
  const pipeline = new Pipeline({
    journal,
    jobs,
    clock: new ManualClock(),
    log: silentLogger(),
    maxFileBytes: 1 << 20,
    uploadMarginMs: 0,
    lookupMarginMs: 0,
    folders: new Map(
      config.folders.map((f) => [f.name, { config: f, mode: 'single-file' as const, workflow }]),
    ),
    concurrency: options.concurrency,
    ...(options.onBacklog ? { onBacklog: options.onBacklog } : {}),
  });
  for (const folder of options.folders) {
    const processing = path.join(dir, folder, '.processing');
    mkdirSync(processing, { recursive: true });
    for (let i = 0; i < options.files; i++) {
      const name = `${folder}-${i}.pdf`;
      const p = path.join(processing, name);
      writeFileSync(p, await makePdf(`${folder} ${i}`));
      pipeline.accept(folder, {
        name,
        originalPath: path.join(dir, folder, name),
        claimedPath: p,
      });
    }
  }
  return { journal, pipeline, seen, release, releaseUploads: () => releaseUploads() };
}

describe('pipeline scheduling', () => {
  it('pauses intake when a folder backlog reaches its high mark and resumes once it drains; never more in flight than the folder allows', async () => {
    const events: boolean[] = [];
    const run = await blockedCreates({
      folders: ['pdf'],
      folderConcurrency: 2,
      concurrency: 8,
      files: 20,
      onBacklog: (_folder, full) => events.push(full),
    });
    expect(events).toEqual([true]);
    await waitFor(() => run.seen.inFlight === 2);
    expect(run.seen.maxInFlight).toBe(2);
    run.release();
    await run.pipeline.idle();
    // That no third one starts while two are held is the scheduler's unit test (no wait for it here).
    expect(run.seen.maxInFlight).toBe(2);
    expect(events).toEqual([true, false]);
    expect((await run.journal.stats()).files.done).toBe(20);
    await run.journal.close();
  });
});

describe('folder priority', () => {
  it('starts the waiting files of the higher priority folder first, though the other folder’s came in earlier (after those taken up already)', async () => {
    const run = await blockedCreates({
      folders: ['bulk', 'urgent'],
      priorities: { urgent: 10 },
      folderConcurrency: 4,
      concurrency: 1,
      files: 3,
    });
    // bulk-0 and bulk-1 were taken up (the one call's place and the lookahead's file) before the
    // others came in, and either may reach the call first; the rest wait for them.
    await waitFor(() => run.seen.inFlight === 1);
    run.release();
    await run.pipeline.idle();
    const order = run.seen.order;
    expect([...order.slice(0, 2)].sort()).toEqual(['bulk-0.pdf', 'bulk-1.pdf']);
    expect([...order.slice(2, 5)].sort()).toEqual(['urgent-0.pdf', 'urgent-1.pdf', 'urgent-2.pdf']);
    expect(order.slice(5)).toEqual(['bulk-2.pdf']);
    await run.journal.close();
  });
});

describe('recovery order', () => {
  it('resumes uploads soonest deadline first', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-order-'));
    dirs.push(dir);
    const processing = path.join(dir, 'in', '.processing');
    mkdirSync(processing, { recursive: true });
    const config = agentConfigSchema.parse({
      sandbox: { enabled: true },
      stateDir: path.join(dir, 'state'),
      folders: [
        {
          name: 'pdf',
          source: { type: 'local', path: path.join(dir, 'in') },
          workflowId: 'wf',
          concurrency: 1,
        },
      ],
    });
    const clock = new ManualClock();
    const journal = SqliteJournal.open(path.join(dir, 'state', 'j.sqlite'), { clock, log: silentLogger() });
    const deadlines = [50, 10, 40, 20, 30].map((m) => clock.now() + m * 60_000);
    for (const [i, deadline] of deadlines.entries()) {
      const claimedPath = path.join(processing, `f${i}.pdf`);
      writeFileSync(claimedPath, `file ${i}`);
      const st = statSync(claimedPath);
      const { item } = await journal.recordClaim({
        folder: 'pdf',
        sourcePath: path.join(dir, 'in', `f${i}.pdf`),
        claimedPath,
        fileName: `f${i}.pdf`,
        size: st.size,
        mtimeMs: st.mtimeMs,
        sha256: createHash('sha256').update(`file ${i}`).digest('hex'),
        workflowId: 'wf',
        mode: 'single-file',
      });
      await journal.transition(item.id, 'validated');
      await journal.transition(item.id, 'creating');
      await journal.transition(item.id, 'created', {
        jobId: `job_${i}`,
        uploadUrl: `https://files.invalid/${i}?sig=s`,
        uploadDeadline: deadline,
      });
    }
    const order: string[] = [];
    const jobs = {
      uploadFile: async (_url: string, filePath: string) => {
        order.push(path.basename(filePath));
        return { md5: 'm', size: 1 };
      },
    } as unknown as PipelineJobs;
    const pipeline = new Pipeline({
      journal,
      jobs,
      clock,
      log: silentLogger(),
      maxFileBytes: 1 << 20,
      uploadMarginMs: 0,
      lookupMarginMs: 0,
      folders: new Map([['pdf', { config: config.folders[0]!, mode: 'single-file', workflow }]]),
      concurrency: 1,
    });
    expect((await pipeline.recover()).resumed).toBe(5);
    await pipeline.idle();
    // LOOKAHEAD files run at once, either of them may reach its upload first: each upload is one of
    // the LOOKAHEAD soonest deadlines not uploaded yet.
    const left = ['f1.pdf', 'f3.pdf', 'f4.pdf', 'f2.pdf', 'f0.pdf'];
    for (const name of order) {
      expect(left.slice(0, LOOKAHEAD)).toContain(name);
      left.splice(left.indexOf(name), 1);
    }
    expect(left).toEqual([]);
    await journal.close();
  });
});

describe('agent concurrency', () => {
  it('never has more creates in flight than the agent concurrency, across folders, while twice as many files are taken up', async () => {
    const run = await blockedCreates({
      folders: ['a', 'b'],
      folderConcurrency: 4,
      concurrency: 3,
      files: 10,
    });
    await waitFor(() => run.seen.inFlight === 3);
    // The lookahead: three more files did their local steps and wait, intent recorded, for a call's place.
    await waitFor(async () => (await run.journal.stats()).files.creating === 6);
    expect(run.seen.maxInFlight).toBe(3);
    run.release();
    await run.pipeline.idle();
    expect(run.seen.maxInFlight).toBe(3);
    expect((await run.journal.stats()).files.done).toBe(20);
    await run.journal.close();
  });

  it('never has more uploads in flight than the agent concurrency, while twice as many files are taken up', async () => {
    const run = await blockedCreates({
      folders: ['a'],
      folderConcurrency: 8,
      concurrency: 2,
      files: 6,
      holdUploads: true,
    });
    await waitFor(() => run.seen.uploadsInFlight === 2);
    // The two held uploads hold both calls' places: the other two files taken up were created
    // before that, or wait for a place with their intent recorded (which of them is a race).
    await waitFor(async () => {
      const { files } = await run.journal.stats();
      return files.creating + files.created === 4;
    });
    expect(run.seen.maxUploadsInFlight).toBe(2);
    run.releaseUploads();
    await run.pipeline.idle();
    expect(run.seen.maxUploadsInFlight).toBe(2);
    expect((await run.journal.stats()).files.done).toBe(6);
    await run.journal.close();
  });
});
