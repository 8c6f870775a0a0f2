import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Workflow } from '../../src/domain/wire.js';
import { Journal } from '../../src/journal/index.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
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

describe('pipeline scheduling', () => {
  it('pauses intake when a folder backlog reaches its high mark and resumes once it drains; never more in flight than the folder allows', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-bp-'));
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
          concurrency: 2,
        },
      ],
    });
    const journal = Journal.open(path.join(dir, 'state', 'j.sqlite'), {
      clock: new ManualClock(),
      log: silentLogger(),
    });
    let inFlight = 0;
    let maxInFlight = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let n = 0;
    // A fake service: only what the scheduler needs to be observed (creates block until released).
    const jobs = {
      createSingleFile: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await gate;
        inFlight--;
        return {
          id: `job_${++n}`,
          fileUploadUrl: 'https://files.invalid/u?sig=x',
          uploadExpiresAt: '2099-01-01T00:00:00.000Z',
        };
      },
      uploadFile: async () => ({ md5: 'm', size: 1 }),
    } as unknown as PipelineJobs;
    const events: boolean[] = [];
    const pipeline = new Pipeline({
      journal,
      jobs,
      clock: new ManualClock(),
      log: silentLogger(),
      maxFileBytes: 1 << 20,
      uploadMarginMs: 0,
      lookupMarginMs: 0,
      folders: new Map([['pdf', { config: config.folders[0]!, mode: 'single-file', workflow }]]),
      concurrency: 8,
      onBacklog: (_folder, full) => events.push(full),
    });
    for (let i = 0; i < 20; i++) {
      const p = path.join(processing, `f${i}.pdf`);
      writeFileSync(p, await makePdf(`bp ${i}`));
      pipeline.accept('pdf', {
        name: `f${i}.pdf`,
        originalPath: path.join(dir, 'in', `f${i}.pdf`),
        claimedPath: p,
      });
    }
    expect(events).toEqual([true]);
    await new Promise((r) => setTimeout(r, 200));
    expect(maxInFlight).toBe(2);
    release();
    await pipeline.idle();
    expect(events).toEqual([true, false]);
    expect(journal.stats().files.done).toBe(20);
    journal.close();
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
    const journal = Journal.open(path.join(dir, 'state', 'j.sqlite'), { clock, log: silentLogger() });
    const deadlines = [50, 10, 40, 20, 30].map((m) => clock.now() + m * 60_000);
    deadlines.forEach((deadline, i) => {
      const claimedPath = path.join(processing, `f${i}.pdf`);
      writeFileSync(claimedPath, `file ${i}`);
      const st = statSync(claimedPath);
      const { item } = journal.claim({
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
      journal.transition(item.id, 'validated');
      journal.transition(item.id, 'creating');
      journal.transition(item.id, 'created', {
        jobId: `job_${i}`,
        uploadUrl: `https://files.invalid/${i}?sig=s`,
        uploadDeadline: deadline,
      });
    });
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
    expect(order).toEqual(['f1.pdf', 'f3.pdf', 'f4.pdf', 'f2.pdf', 'f0.pdf']);
    journal.close();
  });
});
