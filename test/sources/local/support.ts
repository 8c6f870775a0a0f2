/**
 * A LocalSource on a real temp folder with a ManualClock and no timers: tests write real files,
 * move the clock and call `tick()` themselves.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import {
  type ClaimedFile,
  type LocalFolderConfig,
  LocalSource,
  type LocalSourceOptions,
} from '../../../src/sources/local/local-source.js';

export interface Harness {
  dir: string;
  clock: ManualClock;
  source: LocalSource;
  claimed: ClaimedFile[];
  logs: Array<Record<string, unknown>>;
  write(name: string, content?: string | Buffer): string;
  /** Advances the clock by `ms`, then runs one stat-loop pass. */
  step(ms: number): Promise<void>;
  names(): string[];
  cleanup(): Promise<void>;
}

export function makeTempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'docex-local-'));
}

export function makeHarness(
  folder: Partial<LocalFolderConfig> = {},
  options: Partial<Omit<LocalSourceOptions, 'folder' | 'clock' | 'log'>> & {
    dir?: string;
    clock?: ManualClock;
  } = {},
): Harness {
  const dir = options.dir ?? makeTempDir();
  const clock = options.clock ?? new ManualClock();
  const claimed: ClaimedFile[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const source = new LocalSource({
    statIntervalMs: 0,
    rescanIntervalMs: 0,
    watch: false,
    accept: async (file) => {
      claimed.push(file);
    },
    ...options,
    folder: {
      name: 'invoices',
      path: dir,
      stability: { kind: 'settle', settleMs: 2_000 },
      order: 'mtime',
      ...folder,
    },
    clock,
    log: pino({ level: 'debug' }, sink),
  });
  return {
    dir,
    clock,
    source,
    claimed,
    logs,
    write(name, content = 'content') {
      const p = path.join(dir, name);
      writeFileSync(p, content);
      return p;
    },
    async step(ms) {
      clock.advance(ms);
      await source.tick();
    },
    names: () => claimed.map((c) => c.name),
    async cleanup() {
      await source.stop();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `makeHarness` whose harnesses are cleaned up after each test of the file that calls this. */
export function harnessesCleanedAfterEach(): (...args: Parameters<typeof makeHarness>) => Harness {
  const harnesses: Harness[] = [];
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.cleanup();
  });
  return (...args) => {
    const h = makeHarness(...args);
    harnesses.push(h);
    return h;
  };
}
