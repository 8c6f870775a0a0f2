import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { type ClaimInput, Journal } from '../../src/journal/index.js';
import { JournalReader } from '../../src/ops/journal-reader.js';
import { AgentMetrics } from '../../src/ops/metrics.js';
import { uploadWindowCheck } from '../../src/ops/readiness.js';

let dir: string;
let clock: ManualClock;
let journal: Journal;
let reader: JournalReader;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-ops-journal-'));
  clock = new ManualClock();
  journal = Journal.open(path.join(dir, 'journal.sqlite'), { clock, log: silentLogger() });
  reader = new JournalReader(journal.file);
});

afterEach(() => {
  reader.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
function claim(folder: string): number {
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
  const result = journal.recordClaim(input);
  if (result.kind !== 'claimed') throw new Error('not claimed');
  return result.item.id;
}

/** claimed → created, with an upload window of `windowMs` from now. */
function toCreated(id: number, windowMs = 3_600_000): void {
  journal.transition(id, 'validated');
  journal.transition(id, 'creating', { note: 'test' });
  journal.transition(id, 'created', {
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
    const a = claim('a');
    toCreated(a);
    journal.transition(a, 'uploaded', { md5: 'x' });
    journal.transition(a, 'done');
    const b = claim('a');
    journal.transition(b, 'rejected', { code: 'DOCEX_FILE_EMPTY', reason: 'empty' });
    const c = claim('b');
    toCreated(c);

    const first = (await metrics.render()).text;
    expect(sample(first, 'docex_files_taken_total{folder="a"}')).toBe(2);
    expect(sample(first, 'docex_files_taken_total{folder="b"}')).toBe(1);
    expect(sample(first, 'docex_files_submitted_total{folder="a"}')).toBe(1);
    expect(sample(first, 'docex_files_submitted_total{folder="b"}')).toBeUndefined();
    expect(sample(first, 'docex_files_rejected_total{folder="a",reason="DOCEX_FILE_EMPTY"}')).toBe(1);
    expect(sample(first, 'docex_jobs_created_total{folder="a"}')).toBe(1);
    expect(sample(first, 'docex_jobs_created_total{folder="b"}')).toBe(1);

    // The job of c is made again (its window ran out): a second job for the same file.
    journal.transition(c, 'creating', { note: 'recreate' });
    journal.transition(c, 'created', {
      jobId: 'job-again',
      uploadUrl: 'https://files.example/upload/again?signature=secret',
      uploadDeadline: clock.now() + 3_600_000,
    });
    journal.transition(c, 'uploaded', { md5: 'y' });
    const second = (await metrics.render()).text;
    expect(sample(second, 'docex_jobs_created_total{folder="b"}')).toBe(2);
    expect(sample(second, 'docex_files_submitted_total{folder="b"}')).toBe(1);
    expect(sample(second, 'docex_files_taken_total{folder="a"}')).toBe(2);
  });

  it('lists pending uploads with their window, and readiness fails from 90% of it', async () => {
    const id = claim('a');
    toCreated(id, 1_000_000);
    const [pending] = reader.pendingUploads();
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
    journal.transition(id, 'uploaded', { md5: 'z' });
    expect(reader.pendingUploads()).toEqual([]);
    expect(await check.run(signal)).toMatchObject({ ok: true });
  });
});
