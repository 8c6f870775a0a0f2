import { afterEach, describe, expect, it } from 'vitest';
import {
  GarbagePacer,
  type HeapProbe,
  IdleCollector,
  processHeapProbe,
  QUIET_BUSY_SHARE,
  WORTH_COLLECTING_BYTES,
} from '../../src/core/collect.js';

const global = globalThis as { gc?: unknown };
const exposed = global.gc;
afterEach(() => {
  global.gc = exposed;
});

describe('GarbagePacer', () => {
  it('asks for one young-generation GC per interval of bytes passed', () => {
    const calls: unknown[] = [];
    global.gc = (options: unknown) => calls.push(options);
    const pacer = new GarbagePacer(1000);
    for (let i = 0; i < 25; i++) pacer.passed(100);
    expect(calls).toEqual([{ type: 'minor' }, { type: 'minor' }]);
  });

  it('asks for one full GC per interval when made for promoted garbage (major)', () => {
    const calls: unknown[] = [];
    global.gc = (options: unknown) => calls.push(options);
    const pacer = new GarbagePacer(500, 'major');
    for (let i = 0; i < 1200; i++) pacer.passed(1);
    expect(calls).toEqual([
      { type: 'major', execution: 'sync' },
      { type: 'major', execution: 'sync' },
    ]);
  });

  it('does nothing when node runs without --expose-gc', () => {
    global.gc = undefined;
    const pacer = new GarbagePacer(10);
    expect(() => pacer.passed(100)).not.toThrow();
  });
});

/** A heap whose readings the test sets; a collection brings it down to `live`. */
class FakeHeap implements HeapProbe {
  busy = 0;
  used = 30 * 1024 ** 2;
  live = 20 * 1024 ** 2;
  collections = 0;
  busyShare = () => this.busy;
  usedHeapBytes = () => this.used;
  collect = () => {
    this.collections++;
    this.used = this.live;
  };
}

describe('IdleCollector', () => {
  it('collects at the first quiet look and says how far the heap came down', () => {
    const heap = new FakeHeap();
    expect(new IdleCollector(heap).check()).toEqual({
      usedBefore: 30 * 1024 ** 2,
      usedAfter: 20 * 1024 ** 2,
    });
    expect(heap.collections).toBe(1);
  });

  it('leaves a busy event loop to V8', () => {
    const heap = new FakeHeap();
    heap.busy = QUIET_BUSY_SHARE;
    const collector = new IdleCollector(heap);
    expect(collector.check()).toBeUndefined();
    heap.busy = QUIET_BUSY_SHARE / 2;
    expect(collector.check()).toBeDefined();
    expect(heap.collections).toBe(1);
  });

  it('collects again only once the heap has grown by WORTH_COLLECTING_BYTES', () => {
    const heap = new FakeHeap();
    const collector = new IdleCollector(heap);
    collector.check();
    heap.used = heap.live + WORTH_COLLECTING_BYTES - 1;
    expect(collector.check()).toBeUndefined();
    heap.used = heap.live + WORTH_COLLECTING_BYTES;
    expect(collector.check()).toBeDefined();
    expect(heap.collections).toBe(2);
  });
});

describe('processHeapProbe', () => {
  it('asks V8 for a full GC that gives memory back', () => {
    const calls: unknown[] = [];
    global.gc = (options: unknown) => calls.push(options);
    processHeapProbe()!.collect();
    expect(calls).toEqual([{ type: 'major', execution: 'sync', flavor: 'last-resort' }]);
  });

  it('reads a busy share between 0 and 1 and the used heap', () => {
    global.gc = () => {};
    const probe = processHeapProbe()!;
    const share = probe.busyShare();
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
    expect(probe.usedHeapBytes()).toBeGreaterThan(0);
  });

  it('is absent when node runs without --expose-gc', () => {
    global.gc = undefined;
    expect(processHeapProbe()).toBeUndefined();
  });
});
