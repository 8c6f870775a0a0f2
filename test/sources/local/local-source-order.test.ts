/**
 * The order a local folder hands its complete files over in (order, maxFilesPerScan). Times are
 * set with utimes, so the order never depends on how fast the files were written.
 */
import { appendFileSync, lstatSync, utimesSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Harness, harnessesCleanedAfterEach, type makeHarness } from './support.js';

const harness = harnessesCleanedAfterEach();

/** LOOK_GAP_MS of local-source.ts. */
const LOOK_GAP = 500;

const BASE = Date.parse('2026-11-02T08:00:00Z') / 1000;

/** Writes each name with its modification time, minutes after BASE. */
function drop(h: Harness, files: Record<string, number>): void {
  for (const [name, minutes] of Object.entries(files)) {
    const p = h.write(name);
    utimesSync(p, BASE + minutes * 60, BASE + minutes * 60);
  }
}

/** The names name order would give, reversed in time: the oldest is the last by name. */
const BACKWARDS = { 'a.pdf': 50, 'b.pdf': 40, 'c.pdf': 30, 'd.pdf': 20, 'e.pdf': 10 };

describe('LocalSource: order', () => {
  it('mtime: claims the oldest file first, and files of the same time by name', async () => {
    const h = harness({ order: 'mtime' });
    drop(h, { ...BACKWARDS, 'b2.pdf': 30 });
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['e.pdf', 'd.pdf', 'b2.pdf', 'c.pdf', 'b.pdf', 'a.pdf']);
  });

  it('name: claims by file name whatever the modification times', async () => {
    const h = harness({ order: 'name' });
    drop(h, BACKWARDS);
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['a.pdf', 'b.pdf', 'c.pdf', 'd.pdf', 'e.pdf']);
  });

  it('a file still being written does not hold back one after it in order that is complete', async () => {
    const h = harness({ order: 'name' });
    drop(h, { 'a.pdf': 10, 'b.pdf': 20 });
    await h.source.start();
    await h.step(0);
    appendFileSync(path.join(h.dir, 'a.pdf'), ' more');
    await h.step(2_000);
    expect(h.names()).toEqual(['b.pdf']);
    await h.step(2_000);
    expect(h.names()).toEqual(['b.pdf', 'a.pdf']);
  });

  it('maxFilesPerScan 2: five complete files go two per pass, oldest first', async () => {
    const h = harness({ order: 'mtime', maxFilesPerScan: 2 });
    drop(h, BACKWARDS);
    await h.source.start();
    await h.step(0);
    expect(h.names()).toEqual([]);
    await h.step(2_000);
    expect(h.names()).toEqual(['e.pdf', 'd.pdf']);
    await h.step(0);
    expect(h.names()).toEqual(['e.pdf', 'd.pdf', 'c.pdf', 'b.pdf']);
    await h.step(0);
    expect(h.names()).toEqual(['e.pdf', 'd.pdf', 'c.pdf', 'b.pdf', 'a.pdf']);
    expect(h.source.pendingCount).toBe(0);
  });

  it('a backlog larger than maxPending: the scan lists every file and holds the oldest, the rest follow oldest first', async () => {
    const h = harness({ order: 'mtime' }, { maxPending: 2 });
    drop(h, BACKWARDS);
    await h.source.start();
    expect(h.source.pendingCount).toBe(2);
    for (let round = 0; round < 6 && h.claimed.length < 5; round++) {
      await h.step(0);
      await h.step(2_000);
    }
    expect(h.names()).toEqual(['e.pdf', 'd.pdf', 'c.pdf', 'b.pdf', 'a.pdf']);
  });
});

/** A harness whose lstats of pending files (one per look) are counted. */
function lookCounting(folder: Parameters<typeof makeHarness>[0], accept?: (h: Harness) => Promise<void>) {
  let looks = 0;
  const h: Harness = harness(folder, {
    lstat: (p) => {
      looks += 1;
      return fs.lstat(p);
    },
    ...(accept ? { accept: () => accept(h) } : {}),
  });
  return {
    h,
    resetLooks: () => {
      looks = 0;
    },
    looks: () => looks,
    /** Moves the clock by `ms`, runs one pass, and answers the looks it took. */
    looksOfPass: async (ms: number) => {
      looks = 0;
      await h.step(ms);
      return looks;
    },
  };
}

function dropNumbered(h: Harness, count: number): void {
  for (let i = 0; i < count; i++) h.write(`f${String(i).padStart(4, '0')}.pdf`);
}

describe('LocalSource: looks at pending files', () => {
  it('a pass that backpressure pauses after its first claim stats one chunk and the paused look-ahead, not every pending name', async () => {
    let pauseOnAccept: ((h: Harness) => void) | undefined;
    const { h, looksOfPass } = lookCounting({ order: 'name' }, async (h) => pauseOnAccept?.(h));
    dropNumbered(h, 1_000);
    await h.source.start();
    await h.step(0);
    expect(h.source.pendingCount).toBe(1_000);
    pauseOnAccept = (h) => h.source.pause();
    // 64 looked at before the claim, 256 more while paused (their settle state kept current).
    expect(await looksOfPass(2_000)).toBeLessThanOrEqual(64 + 256);
    expect(h.source.pendingCount).toBe(999);
    expect(lstatSync(path.join(h.dir, 'f0000.pdf'), { throwIfNoEntry: false })).toBeUndefined();
  });

  it('while paused, a pass looks at each pending name at most once per 500 ms, 256 names at most', async () => {
    const { h, looksOfPass } = lookCounting({ order: 'name' });
    dropNumbered(h, 600);
    h.source.pause();
    await h.source.start();
    expect(await looksOfPass(0)).toBe(256);
    expect(await looksOfPass(0)).toBe(256);
    expect(await looksOfPass(0)).toBe(600 - 512);
    expect(await looksOfPass(LOOK_GAP - 1)).toBe(0);
    expect(await looksOfPass(1)).toBe(256);
    expect(h.claimed).toEqual([]);
  });

  it('a file found complete is claimed at a later resume without another look while that look is under 500 ms old', async () => {
    const { h, looks, resetLooks } = lookCounting(
      { order: 'name', stability: { kind: 'rename-in' } },
      async (h) => h.source.pause(),
    );
    dropNumbered(h, 100);
    await h.source.start();
    resetLooks();
    // The pipeline takes one file, then resumes the source once it finished it: 100 passes.
    for (let pass = 0; pass < 100; pass++) {
      h.source.resume();
      await h.step(0);
    }
    expect(h.source.pendingCount).toBe(0);
    // One look each (the claim's own lstat of the moved file not counted: it goes through fs).
    expect(looks()).toBe(100);
  });

  it('a file found complete 500 ms ago is looked at again before it is claimed', async () => {
    let pauseNext = true;
    const { h, looksOfPass } = lookCounting(
      { order: 'name', stability: { kind: 'rename-in' } },
      async (h) => {
        if (pauseNext) h.source.pause();
      },
    );
    h.write('a.pdf');
    h.write('b.pdf');
    await h.source.start();
    await h.step(0);
    expect(h.source.pendingCount).toBe(1);
    pauseNext = false;
    h.source.resume();
    expect(await looksOfPass(LOOK_GAP)).toBe(1);
    expect(h.source.pendingCount).toBe(0);
  });

  it('while paused, a file found complete is not looked at again until the resume', async () => {
    const { h, looksOfPass } = lookCounting({ order: 'name', stability: { kind: 'rename-in' } });
    dropNumbered(h, 300);
    h.source.pause();
    await h.source.start();
    expect(await looksOfPass(0)).toBe(256);
    expect(await looksOfPass(LOOK_GAP)).toBe(300 - 256);
    expect(await looksOfPass(LOOK_GAP)).toBe(0);
    h.source.resume();
    await h.step(LOOK_GAP);
    expect(h.claimed).toHaveLength(300);
  });
});
