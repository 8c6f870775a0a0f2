import { describe, expect, it } from 'vitest';
import { CallSlots } from '../../src/pipeline/call-slots.js';

/** A call held open until its `end()`; `started` says whether it began. */
function heldCall(slots: CallSlots, folder: string, priority: number, signal?: AbortSignal) {
  let end: () => void = () => {};
  const ended = new Promise<void>((r) => {
    end = r;
  });
  const call = { started: false, end: () => end(), done: Promise.resolve() };
  call.done = slots.run(
    folder,
    priority,
    async () => {
      call.started = true;
      await ended;
    },
    signal,
  );
  return call;
}

/** Lets the promises settled so far run their reactions. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('call slots', () => {
  it('starts at most the concurrency across folders and a folder’s own bound in it', async () => {
    const slots = new CallSlots(3, (folder) => (folder === 'narrow' ? 1 : 8));
    const calls = [
      heldCall(slots, 'narrow', 0),
      heldCall(slots, 'narrow', 0),
      heldCall(slots, 'wide', 0),
      heldCall(slots, 'wide', 0),
      heldCall(slots, 'wide', 0),
    ];
    await settle();
    expect(calls.map((c) => c.started)).toEqual([true, false, true, true, false]);
    expect(slots.running()).toBe(3);
    calls[2]!.end();
    await calls[2]!.done;
    await settle();
    // The narrow folder is at its bound: the place goes to the wide folder's waiting call.
    expect(calls.map((c) => c.started)).toEqual([true, false, true, true, true]);
    calls[0]!.end();
    await calls[0]!.done;
    await settle();
    expect(calls[1]!.started).toBe(true);
    for (const c of calls) c.end();
    await Promise.all(calls.map((c) => c.done));
    expect(slots.running()).toBe(0);
  });

  it('gives a freed place to the waiting call of the greatest priority, then to the one that came first', async () => {
    const slots = new CallSlots(1, () => 8);
    const order: string[] = [];
    const first = heldCall(slots, 'a', 0);
    const waiting = [
      ['low', 1],
      ['high-1', 5],
      ['high-2', 5],
      ['mid', 3],
    ] as const;
    const runs = waiting.map(([name, priority]) =>
      slots.run('a', priority, async () => {
        order.push(name);
      }),
    );
    await settle();
    first.end();
    await Promise.all([first.done, ...runs]);
    expect(order).toEqual(['high-1', 'high-2', 'mid', 'low']);
  });

  it('drops a waiting call whose signal aborts, unstarted, and keeps its place for the next', async () => {
    const slots = new CallSlots(1, () => 8);
    const first = heldCall(slots, 'a', 0);
    const abort = new AbortController();
    const aborted = heldCall(slots, 'a', 9, abort.signal);
    const next = heldCall(slots, 'a', 0);
    abort.abort(new Error('stopping'));
    await expect(aborted.done).rejects.toThrow('stopping');
    first.end();
    await first.done;
    await settle();
    expect(aborted.started).toBe(false);
    expect(next.started).toBe(true);
    next.end();
    await next.done;
    expect(slots.running()).toBe(0);
  });
});
