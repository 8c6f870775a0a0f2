import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { ClaimInput } from '../../src/journal/index.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import { JournalReader } from '../../src/ops/journal-reader.js';
import { AgentMetrics } from '../../src/ops/metrics.js';
import { uploadWindowCheck } from '../../src/ops/readiness.js';

let dir: string;
let clock: ManualClock;
let journal: SqliteJournal;
let reader: JournalReader;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-ops-journal-'));
  clock = new ManualClock();
  journal = SqliteJournal.open(path.join(dir, 'journal.sqlite'), { clock, log: silentLogger() });
  reader = new JournalReader({ kind: 'sqlite', file: journal.location });
});

afterEach(async () => {
  await reader.close();
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
async function claim(folder: string): Promise<number> {
  n++;
  const input: ClaimInput = {
    folder,
    sourcePath: `/in/${folder}/f${n}.pdf`,
    claimedPath: `/in/${folder}/.processing/f${n}.pdf`,
    fileName: `f${n}.pdf`,
    size: 10,
    mtimeMs: 1,
    sha256: n.toString(16).padStart(64, 'a'),
    workflowId: 'wf',
    mode: 'single-file',
  };
  const result = await journal.recordClaim(input);
  if (result.kind !== 'claimed') throw new Error('not claimed');
  return result.item.id;
}

/** claimed → created, with an upload window of `windowMs` from now. */
async function toCreated(id: number, windowMs = 3_600_000): Promise<void> {
  await journal.transition(id, 'validated');
  await journal.transition(id, 'creating', { note: 'test' });
  await journal.transition(id, 'created', {
    jobId: `job-${id}`,
    uploadUrl: `https://files.example/upload/${id}?signature=secret`,
    uploadDeadline: clock.now() + windowMs,
  });
}

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('journal metrics', () => {
  it('fills every journal counter in one scrape, and adds only what happened since at the next', async () => {
    const metrics = new AgentMetrics({ processMetrics: false });
    metrics.attach({ clock, journal: () => reader.counts() });
    const a = await claim('a');
    await toCreated(a);
    await journal.transition(a, 'uploaded', { md5: 'x' });
    await journal.transition(a, 'done');
    const b = await claim('a');
    await journal.transition(b, 'rejected', { code: 'DOCEX_INPUT_EMPTY', reason: 'empty' });
    const c = await claim('b');
    await toCreated(c);

    const first = (await metrics.render()).text;
    expect(sample(first, 'docex_files_taken_total{folder="a"}')).toBe(2);
    expect(sample(first, 'docex_files_taken_total{folder="b"}')).toBe(1);
    expect(sample(first, 'docex_files_submitted_total{folder="a"}')).toBe(1);
    expect(sample(first, 'docex_files_submitted_total{folder="b"}')).toBeUndefined();
    expect(sample(first, 'docex_files_rejected_total{folder="a",reason="DOCEX_INPUT_EMPTY"}')).toBe(1);
    expect(sample(first, 'docex_jobs_created_total{folder="a"}')).toBe(1);
    expect(sample(first, 'docex_jobs_created_total{folder="b"}')).toBe(1);

    // The job of c is made again (its window ran out): a second job for the same file.
    await journal.transition(c, 'creating', { note: 'recreate' });
    await journal.transition(c, 'created', {
      jobId: 'job-again',
      uploadUrl: 'https://files.example/upload/again?signature=secret',
      uploadDeadline: clock.now() + 3_600_000,
    });
    await journal.transition(c, 'uploaded', { md5: 'y' });
    const second = (await metrics.render()).text;
    expect(sample(second, 'docex_jobs_created_total{folder="b"}')).toBe(2);
    expect(sample(second, 'docex_files_submitted_total{folder="b"}')).toBe(1);
    expect(sample(second, 'docex_files_taken_total{folder="a"}')).toBe(2);
  });

  it('lists pending uploads with their window, and readiness fails from 90% of it', async () => {
    const id = await claim('a');
    await toCreated(id, 1_000_000);
    const [pending] = await reader.pendingUploads();
    expect(pending).toMatchObject({
      itemId: id,
      folder: 'a',
      openedAt: clock.now(),
      deadline: clock.now() + 1_000_000,
    });
    const check = uploadWindowCheck(() => reader.pendingUploads(), clock);
    const signal = new AbortController().signal;
    clock.advance(899_000);
    expect(await check.run(signal)).toMatchObject({ ok: true });
    clock.advance(1_000);
    expect(await check.run(signal)).toMatchObject({ ok: false });
    await journal.transition(id, 'uploaded', { md5: 'z' });
    expect(await reader.pendingUploads()).toEqual([]);
    expect(await check.run(signal)).toMatchObject({ ok: true });
  });
});

describe('the holder of a late upload (several agents on one journal)', () => {
  it('names the agent holding the first late upload in /readyz', async () => {
    const late = { itemId: 7, folder: 'invoices', fileName: 'a.pdf', openedAt: 0, deadline: 1_000 };
    const signal = new AbortController().signal;
    const at = { now: () => 950 } as typeof clock;
    const held = uploadWindowCheck(async () => [{ ...late, owner: 'agent-b' }], at);
    expect(await held.run(signal)).toEqual({
      ok: false,
      detail: '1 upload(s) past 90% of their window, e.g. invoices/a.pdf (held by agent agent-b)',
    });
    const alone = uploadWindowCheck(async () => [late], at);
    expect((await alone.run(signal)).detail).toBe(
      '1 upload(s) past 90% of their window, e.g. invoices/a.pdf',
    );
  });
});
