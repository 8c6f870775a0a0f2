import { describe, expect, it } from 'vitest';
import { rng } from '../../bench/chaos/scenario.js';
import { batchedMoments } from '../../bench/chaos/scenarios/pg-faults.js';

describe('the moments of the PostgreSQL chaos scenarios', () => {
  it('strike each fault inside its own batch, 20–80 % of the way through it', () => {
    for (const seed of [1, 2, 3, 4711]) {
      for (const [faults, sets] of [
        [3, 120],
        [2, 12],
        [4, 20],
        [12, 600],
      ] as const) {
        const { batch, moments } = batchedMoments(rng(seed), faults, sets);
        expect(batch * (faults + 1)).toBeGreaterThanOrEqual(sets);
        expect(moments).toHaveLength(faults);
        moments.forEach((m, i) => {
          // Past the batches before it, within its own: work in flight and more waiting.
          expect(m).toBeGreaterThan(i * batch);
          expect(m).toBeLessThanOrEqual(Math.min(sets, (i + 1) * batch));
          expect(m).toBeLessThan(sets);
        });
      }
    }
  });
});
