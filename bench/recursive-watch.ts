/**
 * The cost of watching a recursive folder:
 * `npx tsx bench/recursive-watch.ts [folders=10000] [--limit=N] [--no-watch]`.
 * Makes a drop tree of `folders` sub-folders (100 per company folder, depth 2), starts a recursive
 * LocalSource with its watch on, and reports: start() time (the scan that lists and watches every
 * folder), the inotify watches it holds (read from /proc/self/fdinfo), RSS, one rescan of the tree,
 * and how long a file dropped into a sub-folder made after start takes to be noticed.
 * `--limit=N` refuses every watch past the N-th as the kernel does at fs.inotify.max_user_watches
 * (ENOSPC): the agent must keep taking files, with one warning. `--no-watch`: the same tree scanned
 * without any watch (what the scans cost apart from the watches).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ManualClock } from '../src/core/clock.js';
import { watchDirectory } from '../src/sources/local/dir-watcher.js';
import { LocalSource } from '../src/sources/local/local-source.js';

const folders = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 10_000);
const limitArg = process.argv.find((a) => a.startsWith('--limit='));
const limit = limitArg ? Number(limitArg.slice('--limit='.length)) : undefined;
const watching = !process.argv.includes('--no-watch');
const PER_COMPANY = 100;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** inotify watches this process holds: one `inotify wd:` line per watch in the fdinfo of its inotify fds. */
function inotifyWatches(): number {
  let watches = 0;
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      watches += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // An fd closed while listed.
    }
  }
  return watches;
}

function report(phase: string, started: number, extra: Record<string, unknown> = {}): void {
  console.log(
    JSON.stringify({
      phase,
      ms: Math.round(performance.now() - started),
      rssMB: mb(process.memoryUsage().rss),
      ...extra,
    }),
  );
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-bench-tree-'));
const warnings: string[] = [];
const log = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _enc, done) {
      warnings.push(String(chunk));
      done();
    },
  }),
);
let watches = 0;
const watch: typeof watchDirectory = (target, handlers) => {
  if (limit !== undefined && ++watches > limit) {
    throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), {
      code: 'ENOSPC',
    });
  }
  return watchDirectory(target, handlers);
};
const source = new LocalSource({
  folder: {
    name: 'bench',
    path: dir,
    stability: { kind: 'rename-in' },
    order: 'mtime',
    recursive: { depth: 2 },
  },
  clock: new ManualClock(),
  log,
  accept: async () => {},
  statIntervalMs: 0,
  rescanIntervalMs: 0,
  watch: watching,
  watchDirectory: watch,
});
try {
  console.log(
    JSON.stringify({
      phase: 'baseline',
      folders,
      maxUserWatches: Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8')),
      rssMB: mb(process.memoryUsage().rss),
      inotifyWatches: inotifyWatches(),
    }),
  );
  let t = performance.now();
  const companies = Math.ceil(folders / PER_COMPANY);
  for (let c = 0; c < companies; c++) {
    const jobs: Promise<unknown>[] = [];
    for (let k = 0; k < PER_COMPANY && c * PER_COMPANY + k < folders; k++) {
      jobs.push(fs.mkdir(path.join(dir, `company-${c}`, `kind-${k}`), { recursive: true }));
    }
    await Promise.all(jobs);
  }
  report('make the tree', t, { folders: folders + companies });

  t = performance.now();
  await source.start();
  report('start(): scan, list and watch every folder', t, {
    watchedFolders: source.watchedFolders,
    inotifyWatches: inotifyWatches(),
  });

  t = performance.now();
  await source.scan();
  report('one rescan of the whole tree', t, { watchedFolders: source.watchedFolders });

  // A sub-folder made after start, a file in it: noticed through the watch (and a scan it asks for).
  if (watching) {
    t = performance.now();
    await fs.mkdir(path.join(dir, 'company-new', 'invoices'), { recursive: true });
    await fs.writeFile(path.join(dir, 'company-new', 'invoices', 'x.pdf'), 'x');
    while (source.pendingCount === 0) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await source.tick();
    }
    report('file in a new sub-folder noticed', t, { pending: source.pendingCount });
  }
  console.log(
    JSON.stringify({
      phase: 'warnings',
      count: warnings.length,
      codes: warnings.map((w) => (JSON.parse(w) as { code?: string }).code),
    }),
  );
} finally {
  await source.stop();
  rmSync(dir, { recursive: true, force: true });
}
