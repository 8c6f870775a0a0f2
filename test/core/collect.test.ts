import { afterEach, describe, expect, it } from 'vitest';
import { GarbagePacer } from '../../src/core/collect.js';

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

  it('does nothing when node runs without --expose-gc', () => {
    global.gc = undefined;
    const pacer = new GarbagePacer(10);
    expect(() => pacer.passed(100)).not.toThrow();
  });
});
