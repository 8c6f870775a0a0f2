/**
 * Start-up scan of a large backlog: `npx tsx bench/local-scan.ts [count=100000] [--drain]`.
 * Phases run in order of growing memory so peak RSS after each phase belongs to it:
 *   1. start() with the default bound (10,000 pending), 2. one stat-loop pass over them,
 *   3. a full scan with no bound (every name held), and with --drain
 *   4. 1-byte files under the rename-in rule claimed into .processing until the folder is empty.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src/core/clock.js';
import { silentLogger } from '../src/core/logger.js';
import { LocalSource, type LocalSourceOptions } from '../src/sources/local/local-source.js';

const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 100_000);
const drain = process.argv.includes('--drain');
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
/** Heap after a full GC when run with --expose-gc, so garbage is not counted as retained. */
const heap = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return mb(process.memoryUsage().heapUsed);
};
const peak = () => mb(process.resourceUsage().maxRSS * 1024);

function report(phase: string, started: number, extra: Record<string, unknown> = {}): void {
  const ms = Math.round(performance.now() - started);
  console.log(
    JSON.stringify({
      phase,
      ms,
      rssMB: mb(process.memoryUsage().rss),
      peakRssMB: peak(),
      heapMB: heap(),
      ...extra,
    }),
  );
}

async function createFiles(dir: string, n: number, content: string): Promise<void> {
  const batch = 500;
  for (let i = 0; i < n; i += batch) {
    const jobs: Promise<void>[] = [];
    for (let j = i; j < Math.min(n, i + batch); j++) {
      jobs.push(fs.writeFile(path.join(dir, `invoice-${String(j).padStart(6, '0')}.pdf`), content));
    }
    await Promise.all(jobs);
  }
}

function source(dir: string, extra: Partial<LocalSourceOptions>): LocalSource {
  return new LocalSource({
    folder: { name: 'bench', path: dir, stability: { kind: 'settle', settleMs: 2_000 }, order: 'mtime' },
    clock: new ManualClock(),
    log: silentLogger(),
    accept: async () => {},
    statIntervalMs: 0,
    rescanIntervalMs: 0,
    watch: false,
    ...extra,
  });
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-bench-scan-'));
try {
  console.log(
    JSON.stringify({ phase: 'baseline', count, rssMB: mb(process.memoryUsage().rss), peakRssMB: peak() }),
  );
  let t = performance.now();
  await createFiles(dir, count, '');
  report('create empty files', t);

  const bounded = source(dir, {});
  t = performance.now();
  await bounded.start();
  report('start() scan, default bound', t, { pending: bounded.pendingCount });
  t = performance.now();
  await bounded.tick();
  report('one stat-loop pass', t, { pending: bounded.pendingCount });
  await bounded.stop();

  const unbounded = source(dir, { maxPending: Number.POSITIVE_INFINITY });
  t = performance.now();
  await unbounded.start();
  report('full scan, unbounded', t, { pending: unbounded.pendingCount });
  await unbounded.stop();

  if (drain) {
    rmSync(dir, { recursive: true, force: true });
    await fs.mkdir(dir);
    await createFiles(dir, count, 'x');
    let claimed = 0;
    const clock = new ManualClock();
    const renameIn = new LocalSource({
      folder: { name: 'bench', path: dir, stability: { kind: 'rename-in' }, order: 'mtime' },
      clock,
      log: silentLogger(),
      accept: async () => {
        claimed++;
      },
      statIntervalMs: 0,
      rescanIntervalMs: 0,
      watch: false,
    });
    t = performance.now();
    await renameIn.start();
    for (let before = -1; claimed < count && claimed !== before; ) {
      before = claimed;
      await renameIn.tick();
    }
    report('drain: claim every file (rename-in)', t, {
      claimed,
      perSecond: Math.round(claimed / ((performance.now() - t) / 1000)),
    });
    await renameIn.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
