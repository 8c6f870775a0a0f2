import { appendFileSync, existsSync, readdirSync, renameSync, rmSync, unlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { isDocexError } from '../../../src/core/errors.js';
import { type ClaimedFile, PAUSED_LOOKAHEAD } from '../../../src/sources/local/local-source.js';
import { harnessesCleanedAfterEach, makeTempDir } from './support.js';

const harness = harnessesCleanedAfterEach();

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('LocalSource: start-up and events', () => {
  it('takes files dropped while the agent was down through the start-up scan', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) h.write(`before-${i}.pdf`);
    await h.source.start();
    expect(h.source.pendingCount).toBe(5);
    await h.step(0);
    await h.step(2_000);
    expect(h.names().sort()).toEqual([0, 1, 2, 3, 4].map((i) => `before-${i}.pdf`));
  });

  it('sees a file dropped after start through the folder watch', async () => {
    const h = harness({}, { watch: true });
    await h.source.start();
    h.write('new.pdf');
    await until(() => h.source.pendingCount === 1);
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['new.pdf']);
  });

  it('sees a renamed-in file through the folder watch', async () => {
    const h = harness({ stability: { kind: 'rename-in' } }, { watch: true });
    await h.source.start();
    const temp = h.write('r.pdf.part');
    renameSync(temp, path.join(h.dir, 'r.pdf'));
    await until(() => h.source.pendingCount === 1);
    await h.step(0);
    expect(h.names()).toEqual(['r.pdf']);
  });

  it('claims a renamed-in file on its watch event, without waiting for the stat period', async () => {
    // A stat period of a minute: only the watch event can have woken the loop in time.
    const h = harness({ stability: { kind: 'rename-in' } }, { watch: true, statIntervalMs: 60_000 });
    await h.source.start();
    const temp = h.write('now.pdf.part');
    renameSync(temp, path.join(h.dir, 'now.pdf'));
    await until(() => h.claimed.length === 1);
    expect(h.names()).toEqual(['now.pdf']);
  });

  it('keeps no stat timer while the folder is idle: a noticed file starts it until the file is claimed', async () => {
    const h = harness({}, { watch: true, statIntervalMs: 10 });
    await h.source.start();
    expect(h.source.statLoopRunning).toBe(false);
    h.write('settling.pdf');
    // The watch's pass sees the file unsettled and leaves the timer running for it.
    await until(() => h.source.pendingCount === 1 && h.source.statLoopRunning);
    h.clock.advance(2_000);
    // The timer's passes see the file settled and claim it; with nothing pending the timer stops.
    await until(() => h.claimed.length === 1 && !h.source.statLoopRunning);
    expect(h.names()).toEqual(['settling.pdf']);
  });

  it('in polling mode finds new files by rescanning, without a watch', async () => {
    const h = harness({ usePolling: true, pollIntervalMs: 20 });
    await h.source.start();
    h.write('nfs.pdf');
    await until(() => {
      void h.source.tick();
      return h.source.pendingCount === 1;
    });
    await h.step(0);
    await h.step(2_000);
    expect(h.names()).toEqual(['nfs.pdf']);
  });

  it('falls back to polling when the folder watch cannot be set up', async () => {
    const h = harness(
      { pollIntervalMs: 20 },
      {
        watch: true,
        watchDirectory: () => {
          throw Object.assign(new Error('inotify watch limit'), { code: 'ENOSPC' });
        },
      },
    );
    await h.source.start();
    expect(h.logs.some((l) => l['msg'] === 'folder watch unavailable, polling instead')).toBe(true);
    h.write('late.pdf');
    await until(() => {
      void h.source.tick();
      return h.source.pendingCount === 1;
    });
  });

  it('forgets a pending file that disappears before it settles', async () => {
    const h = harness();
    const p = h.write('gone.pdf');
    await h.source.start();
    await h.step(0);
    unlinkSync(p);
    await h.step(2_000);
    expect(h.source.pendingCount).toBe(0);
    expect(h.claimed).toEqual([]);
  });

  it('refuses to start on a missing folder with DOCEX_SOURCE_FOLDER_MISSING, naming the folder, its path and how to fix it', async () => {
    const dir = makeTempDir();
    rmSync(dir, { recursive: true });
    const h = harness({}, { dir });
    const err = await h.source.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDocexError(err, 'DOCEX_SOURCE_FOLDER_MISSING')).toBe(true);
    // The source is not told the folder's key in the configuration: it names it by the folder's name.
    expect((err as Error).message).toContain(
      `folder invoices: drop folder ${dir} (folders[name=invoices].source.path) does not exist; the agent makes no drop folder unless the folder says create: true. Fix: create it for the agent's user and the ERP's group (install -d`,
    );
  });
});

describe('LocalSource: backpressure and bounds', () => {
  it('keeps observing while paused and hands files out only after resume', async () => {
    const h = harness();
    h.write('held.pdf');
    await h.source.start();
    h.source.pause();
    await h.step(0);
    await h.step(5_000);
    expect(h.claimed).toEqual([]);
    expect(existsSync(path.join(h.dir, 'held.pdf'))).toBe(true);
    h.source.resume();
    await h.step(0);
    expect(h.names()).toEqual(['held.pdf']);
  });

  it('while paused looks only at the next PAUSED_LOOKAHEAD names each pass, and claims all once resumed', async () => {
    let looks = 0;
    const h = harness(
      { stability: { kind: 'rename-in' } },
      {
        probeReadable: async () => {
          looks++;
          return true;
        },
      },
    );
    const files = PAUSED_LOOKAHEAD + 44;
    for (let i = 0; i < files; i++) h.write(`b-${String(i).padStart(3, '0')}.pdf`);
    await h.source.start();
    h.source.pause();
    await h.step(0);
    expect(looks).toBe(PAUSED_LOOKAHEAD);
    expect(h.claimed).toEqual([]);
    h.source.resume();
    await h.step(0);
    expect(h.claimed).toHaveLength(files);
  });

  it('claims at once when resumed, without waiting for the stat period', async () => {
    const h = harness({ stability: { kind: 'rename-in' } }, { statIntervalMs: 60_000 });
    h.write('waiting.pdf');
    await h.source.start();
    h.source.pause();
    await h.step(0);
    expect(h.claimed).toEqual([]);
    h.source.resume();
    await until(() => h.claimed.length === 1);
    expect(h.names()).toEqual(['waiting.pdf']);
  });

  it('never holds more than maxPending names and drains a larger backlog by rescanning', async () => {
    const h = harness({}, { maxPending: 4 });
    for (let i = 0; i < 11; i++) h.write(`bulk-${String(i).padStart(2, '0')}.pdf`);
    await h.source.start();
    expect(h.source.pendingCount).toBe(4);
    for (let round = 0; round < 12 && h.claimed.length < 11; round++) {
      await h.step(0);
      expect(h.source.pendingCount).toBeLessThanOrEqual(4);
      await h.step(2_000);
      expect(h.source.pendingCount).toBeLessThanOrEqual(4);
    }
    expect(h.claimed).toHaveLength(11);
    expect(new Set(h.names()).size).toBe(11);
  });
});

describe('LocalSource: claiming', () => {
  it('puts a file back and waits again when it changes during the claim', async () => {
    let grow = true;
    const h = harness(
      {},
      {
        rename: async (from, to) => {
          if (grow) appendFileSync(from, ' more');
          grow = false;
          await fs.rename(from, to);
        },
      },
    );
    h.write('busy.pdf', 'start');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    expect(existsSync(path.join(h.dir, 'busy.pdf'))).toBe(true);
    expect(h.logs.some((l) => l['msg'] === 'file changed while claiming, put back')).toBe(true);
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed.map((c) => [c.name, c.size])).toEqual([['busy.pdf', 10]]);
  });

  it('hands nothing over when another claimer took the file first', async () => {
    const h = harness(
      {},
      {
        rename: async (from) => {
          unlinkSync(from);
          throw Object.assign(new Error('gone'), { code: 'ENOENT' });
        },
      },
    );
    h.write('stolen.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.claimed).toEqual([]);
    expect(h.source.pendingCount).toBe(0);
  });

  it('two sources on one folder hand every file out exactly once', async () => {
    const clock = new ManualClock();
    const a = harness({}, { clock });
    const b = harness({}, { clock, dir: a.dir });
    for (let i = 0; i < 30; i++) a.write(`shared-${i}.pdf`);
    await Promise.all([a.source.start(), b.source.start()]);
    await Promise.all([a.source.tick(), b.source.tick()]);
    clock.advance(2_000);
    await Promise.all([a.source.tick(), b.source.tick()]);
    const all = [...a.names(), ...b.names()].sort();
    expect(all).toHaveLength(30);
    expect(new Set(all).size).toBe(30);
    expect(readdirSync(path.join(a.dir, '.processing'))).toHaveLength(30);
  });

  it('logs a failed hand-off and leaves the file in .processing for recovery', async () => {
    const h = harness(
      {},
      {
        accept: async (_file: ClaimedFile) => {
          throw new Error('queue closed');
        },
      },
    );
    h.write('orphan.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.logs.some((l) => l['msg'] === 'hand-off failed' && l['file'] === 'orphan.pdf')).toBe(true);
    expect(readdirSync(path.join(h.dir, '.processing'))).toEqual(['orphan.pdf']);
  });

  it('retries a claim that failed for another reason only after a back-off', async () => {
    let calls = 0;
    const h = harness(
      {},
      {
        rename: async (from, to) => {
          calls++;
          if (calls === 1) throw Object.assign(new Error('I/O error'), { code: 'EIO' });
          await fs.rename(from, to);
        },
      },
    );
    h.write('retry.pdf');
    await h.source.start();
    await h.step(0);
    await h.step(2_000);
    expect(h.logs.some((l) => l['msg'] === 'claim failed' && l['code'] === 'DOCEX_SOURCE_CLAIM_FAILED')).toBe(
      true,
    );
    await h.step(10_000);
    expect(calls).toBe(1);
    await h.step(20_000);
    expect(h.names()).toEqual(['retry.pdf']);
  });
});
