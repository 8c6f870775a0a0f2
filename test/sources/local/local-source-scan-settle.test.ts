/**
 * A backlog found by the start-up scan: the scan's stat of each file (oldest first needs its mtime)
 * is its first observation, so its settle time runs while the scan goes on, and it is not stat'ed
 * again before that time is up. Still two observations settleMs apart, the same size and mtime.
 */
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { LocalSource } from '../../../src/sources/local/local-source.js';
import { type Harness, harnessesCleanedAfterEach, type makeHarness, makeTempDir } from './support.js';

const harness = harnessesCleanedAfterEach();

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A harness whose lstats are counted (the scan's and the looks'). */
function lstatCounting(folder: Parameters<typeof makeHarness>[0] = {}) {
  const counted = { lstats: 0 };
  const h: Harness = harness(folder, {
    lstat: (p) => {
      counted.lstats += 1;
      return fs.lstat(p);
    },
  });
  return { h, counted };
}

describe('LocalSource: settle times of a backlog found by the scan', () => {
  it('claims a file the start-up scan saw settleMs after the scan, with one look of the stat loop', async () => {
    const { h, counted } = lstatCounting();
    h.write('waiting.pdf');
    await h.source.start();
    expect(counted.lstats).toBe(1);
    await h.step(2_000);
    expect(h.names()).toEqual(['waiting.pdf']);
    expect(counted.lstats).toBe(2);
  });

  it('does not stat a file the scan saw again before its settle time is up', async () => {
    const { h, counted } = lstatCounting();
    for (let i = 0; i < 10; i++) h.write(`f${i}.pdf`);
    await h.source.start();
    counted.lstats = 0;
    await h.step(0);
    await h.step(1_000);
    await h.step(999);
    expect(counted.lstats).toBe(0);
    expect(h.claimed).toEqual([]);
    await h.step(1);
    expect(h.claimed).toHaveLength(10);
  });

  it('does not claim at the settle time a file that changed after the scan: its settle starts over', async () => {
    const h = harness();
    const file = h.write('growing.pdf', 'first part');
    await h.source.start();
    appendFileSync(file, ' and more');
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    await h.step(1_999);
    expect(h.claimed).toEqual([]);
    await h.step(1);
    expect(h.names()).toEqual(['growing.pdf']);
    expect(h.claimed[0]?.size).toBe('first part and more'.length);
  });

  it('looks at a file the scan saw empty after the plain settle time, so bytes written meanwhile start its settle', async () => {
    const h = harness();
    const file = h.write('late.pdf', '');
    await h.source.start();
    writeFileSync(file, 'now written');
    await h.step(2_000);
    await h.step(2_000);
    expect(h.names()).toEqual(['late.pdf']);
  });

  it('still needs two looks of the stat loop under name order, whose scan stats nothing', async () => {
    const { h, counted } = lstatCounting({ order: 'name' });
    h.write('a.pdf');
    await h.source.start();
    expect(counted.lstats).toBe(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    await h.step(2_000);
    expect(h.names()).toEqual(['a.pdf']);
  });

  it('claims when the first scanned file is due, without waiting for the stat period', async () => {
    // A stat period of a minute: only the pass timed for the due file can claim it in time.
    const dir = makeTempDir();
    writeFileSync(path.join(dir, 'soon.pdf'), 'content');
    const claimed: string[] = [];
    const source = new LocalSource({
      folder: { name: 'invoices', path: dir, stability: { kind: 'settle', settleMs: 50 }, order: 'mtime' },
      clock: systemClock,
      log: pino({ level: 'silent' }),
      statIntervalMs: 60_000,
      rescanIntervalMs: 0,
      watch: false,
      accept: async (file) => {
        claimed.push(file.name);
      },
    });
    try {
      await source.start();
      await until(() => claimed.length === 1);
      expect(claimed).toEqual(['soon.pdf']);
    } finally {
      await source.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells that names are waiting as the scan lists its first candidate, before it stat’ed the listing', async () => {
    let lstats = 0;
    const lstatsWhenTold: number[] = [];
    const h = harness(
      {},
      {
        lstat: (p) => {
          lstats += 1;
          return fs.lstat(p);
        },
        onWaiting: () => lstatsWhenTold.push(lstats),
      },
    );
    for (let i = 0; i < 3; i++) h.write(`f${i}.pdf`);
    await h.source.start();
    expect(lstatsWhenTold).toEqual([0]);
    expect(h.source.pendingCount).toBe(3);
  });

  it('tells once that names are waiting in an empty folder, and again once it emptied', async () => {
    let waiting = 0;
    const h = harness({ stability: { kind: 'rename-in' } }, { onWaiting: () => waiting++ });
    h.write('a.pdf');
    h.write('b.pdf');
    await h.source.start();
    expect(waiting).toBe(1);
    await h.step(0);
    expect(h.names().sort()).toEqual(['a.pdf', 'b.pdf']);
    h.write('c.pdf');
    h.source.notice('c.pdf');
    expect(waiting).toBe(2);
  });
});

describe('LocalSource: garbage of a large scan', () => {
  const global = globalThis as { gc?: unknown };
  const exposed = global.gc;
  afterEach(() => {
    global.gc = exposed;
  });

  it('asks for one full GC per collectEveryEntries entries a scan lists', async () => {
    const majors: unknown[] = [];
    global.gc = (options: { type?: string }) => {
      if (options?.type === 'major') majors.push(options);
    };
    const h = harness({}, { collectEveryEntries: 2 });
    for (let i = 0; i < 5; i++) h.write(`f${i}.pdf`);
    await h.source.start();
    expect(majors).toHaveLength(2);
    expect(h.source.pendingCount).toBe(5);
  });
});
