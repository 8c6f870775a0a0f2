/**
 * The worker pool's limits, with a fault-injection worker (plain JavaScript, evaluated): a task
 * that loops, one that eats memory, one that kills its thread. Each answers the limit it hit, and
 * the pool goes on answering the next task on a fresh worker.
 */
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TaskError, WorkerPool } from '../../src/core/worker-pool.js';

const FAULTS = `
const { parentPort, threadId } = require('node:worker_threads');
parentPort.on('message', ({ task, args }) => {
  if (task === 'echo') return parentPort.postMessage({ value: { echo: args[0], threadId } });
  if (task === 'loop') for (;;) {}
  if (task === 'hog') { const keep = []; for (;;) keep.push(new Array(1e5).fill({ a: 1 })); }
  if (task === 'exit') process.exit(3);
  if (task === 'wait') { Atomics.wait(new Int32Array(args[0]), 0, 0); return parentPort.postMessage({ value: { threadId } }); }
  if (task === 'throw') return parentPort.postMessage({ error: { message: 'gone', code: 'ENOENT' } });
});
parentPort.postMessage({ ready: true });
`;

const pools: WorkerPool[] = [];
function pool(threads = 1, timeLimitMs = 500, idleMs?: number, growAfterMs?: number): WorkerPool {
  const p = new WorkerPool(
    () => new Worker(FAULTS, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 32 } }),
    { threads, timeLimitMs, idleMs, growAfterMs },
  );
  pools.push(p);
  return p;
}

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe('WorkerPool', () => {
  it('reuses one worker for task after task', async () => {
    const p = pool();
    const a = await p.run<{ threadId: number }>('echo', [1]);
    const b = await p.run<{ threadId: number }>('echo', [2]);
    expect(a).toMatchObject({ ok: true, value: { echo: 1 } });
    expect(b.ok && a.ok && b.value.threadId).toBe(a.ok && a.value.threadId);
    expect(p.size).toBe(1);
  });

  it('ends a task that runs past the time limit and answers the next one on a new worker', async () => {
    const p = pool();
    expect(await p.run('loop', [])).toEqual({
      ok: false,
      hit: { limit: 'time', message: 'ran longer than 500 ms' },
    });
    expect(await p.run('echo', ['after'])).toMatchObject({ ok: true, value: { echo: 'after' } });
  });

  it('counts the time limit from the start of each task, not from its queueing', async () => {
    const p = pool(1, 400);
    const answers = await Promise.all([p.run('loop', []), p.run('loop', []), p.run('echo', ['third'])]);
    expect(answers.map((a) => (a.ok ? 'ok' : a.hit.limit))).toEqual(['time', 'time', 'ok']);
  });

  it('answers a task that exhausts the memory cap as the memory limit', async () => {
    const p = pool(1, 20_000);
    const answer = await p.run('hog', []);
    expect(answer).toMatchObject({ ok: false, hit: { limit: 'memory' } });
    expect(await p.run('echo', ['after'])).toMatchObject({ ok: true });
  });

  it('answers a task whose worker exits as a crash', async () => {
    const p = pool();
    expect(await p.run('exit', [])).toMatchObject({ ok: false, hit: { limit: 'crash' } });
    expect(await p.run('echo', ['after'])).toMatchObject({ ok: true });
  });

  it("rethrows a task's own error with its code, keeping the worker", async () => {
    const p = pool();
    await expect(p.run('throw', [])).rejects.toEqual(new TaskError('gone', 'ENOENT'));
    await expect(p.run('throw', [])).rejects.toMatchObject({ code: 'ENOENT' });
    expect(p.size).toBe(1);
  });

  it('runs up to `threads` tasks at once', async () => {
    const p = pool(2);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => p.run<{ threadId: number }>('echo', [n])));
    expect(new Set(answers.map((a) => a.ok && a.value.threadId)).size).toBeLessThanOrEqual(2);
    expect(p.size).toBeLessThanOrEqual(2);
  });

  it('ends a worker idle for idleMs and starts a new one for the next task', async () => {
    // Fake timers for the idle timer only; the worker's messages are real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const p = pool(1, 20_000, 30_000);
    const first = await p.run<{ threadId: number }>('echo', [1]);
    vi.advanceTimersByTime(29_999);
    expect(p.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(p.size).toBe(0);
    const second = await p.run<{ threadId: number }>('echo', [2]);
    expect(second).toMatchObject({ ok: true, value: { echo: 2 } });
    expect(second.ok && first.ok && second.value.threadId).not.toBe(first.ok && first.value.threadId);
  });

  it('starts a worker when warmed, runs the next task on it, and starts no second one while it lives', async () => {
    const p = pool(2);
    p.warm();
    expect(p.size).toBe(1);
    p.warm();
    expect(p.size).toBe(1);
    const answer = await p.run<{ threadId: number }>('echo', [1]);
    expect(answer).toMatchObject({ ok: true, value: { echo: 1 } });
    expect(p.size).toBe(1);
  });

  it('ends a warmed worker that got no task within idleMs of its start', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const p = pool(1, 20_000, 30_000);
    p.warm();
    // Its idle timer starts once it said ready (a real message): moved on at each check.
    await vi.waitFor(() => {
      vi.advanceTimersByTime(30_000);
      expect(p.size).toBe(0);
    });
  });

  it('keeps a worker that gets a task before idleMs has passed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const p = pool(1, 20_000, 30_000);
    const first = await p.run<{ threadId: number }>('echo', [1]);
    vi.advanceTimersByTime(20_000);
    const second = await p.run<{ threadId: number }>('echo', [2]);
    vi.advanceTimersByTime(20_000);
    expect(p.size).toBe(1);
    expect(second.ok && first.ok && second.value.threadId).toBe(first.ok && first.value.threadId);
  });

  it('starts a second worker only once a task has waited growAfterMs for the first', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = pool(2, 20_000, undefined, 1000);
    const gate = new Int32Array(new SharedArrayBuffer(4));
    let started!: () => void;
    const blockedStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const blocked = p.run<{ threadId: number }>('wait', [gate.buffer], started);
    const waiting = p.run<{ threadId: number }>('echo', ['second']);
    await blockedStarted;
    vi.advanceTimersByTime(999);
    expect(p.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(p.size).toBe(2);
    const second = await waiting;
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    const first = await blocked;
    expect(second.ok && first.ok && second.value.threadId).not.toBe(first.ok && first.value.threadId);
  });

  it('counts how long the oldest waiting task has waited, not how long the queue has been busy', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = pool(2, 20_000, undefined, 1000);
    const gates = [0, 1].map(() => new Int32Array(new SharedArrayBuffer(4)));
    const open = (gate: Int32Array) => {
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
    };
    const told: (() => void)[] = [];
    const starts = [0, 1].map((n) => new Promise<void>((resolve) => (told[n] = resolve)));
    const held = gates.map((gate, n) => p.run('wait', [gate.buffer], told[n]));
    await starts[0];
    vi.advanceTimersByTime(600);
    const third = p.run<{ echo: string }>('echo', ['third']);
    open(gates[0]!);
    await starts[1];
    // The second task waited 600 ms and was taken; the third, queued since 600, has waited 400.
    vi.advanceTimersByTime(400);
    expect(p.size).toBe(1);
    vi.advanceTimersByTime(600);
    expect(p.size).toBe(2);
    expect(await third).toMatchObject({ ok: true, value: { echo: 'third' } });
    open(gates[1]!);
    await Promise.all(held);
  });

  it('does not count the time the first worker takes to start as waiting', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = pool(2, 20_000, undefined, 1000);
    const gate = new Int32Array(new SharedArrayBuffer(4));
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const first = p.run('wait', [gate.buffer], started);
    const second = p.run<{ echo: string }>('echo', ['second']);
    vi.advanceTimersByTime(1500); // the worker is still starting: a slow start under load
    await firstStarted;
    expect(p.size).toBe(1);
    vi.advanceTimersByTime(999);
    expect(p.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(p.size).toBe(2);
    expect(await second).toMatchObject({ ok: true });
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await first;
  });

  it('keeps one worker while it answers every waiting task before growAfterMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const p = pool(2, 20_000, undefined, 1000);
    const answers = await Promise.all([1, 2, 3, 4].map((n) => p.run<{ threadId: number }>('echo', [n])));
    vi.advanceTimersByTime(1000);
    expect(p.size).toBe(1);
    expect(new Set(answers.map((a) => a.ok && a.value.threadId)).size).toBe(1);
  });

  it('refuses new tasks once closed', async () => {
    const p = pool();
    await p.close();
    await expect(p.run('echo', [1])).rejects.toThrow('closed');
  });
});
