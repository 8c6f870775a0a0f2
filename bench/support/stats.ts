/** Small pure helpers shared by the scenarios. */
import os from 'node:os';

/** Nearest-rank percentile of values (ms); 0 for none. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export const round = (n: number, digits = 1): number => Number(n.toFixed(digits));

/**
 * The run with the median of `key` (the lower middle of an even count), so the figures reported
 * together (throughput, latency, CPU) come from one run, not from different ones.
 */
export function medianRun<T>(runs: readonly T[], key: (run: T) => number): T {
  if (runs.length === 0) throw new Error('medianRun: no runs');
  const sorted = [...runs].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** `[a, b, c]` rotated left by `by`: each round runs the columns in another order. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const k = ((by % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

export interface Machine {
  cpu: string;
  cores: number;
  node: string;
  platform: string;
  memoryGiB: number;
  loadAverageAtStart: number[];
  date: string;
}

export function machine(): Machine {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
    memoryGiB: round(os.totalmem() / 1024 ** 3),
    loadAverageAtStart: os.loadavg().map((n) => round(n, 2)),
    date: new Date().toISOString(),
  };
}

/** Runs `work` over items with `concurrency` workers; answers each item's completion time (Date.now()). */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<number[]> {
  const done: number[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i]!);
        done[i] = Date.now();
      }
    }),
  );
  return done;
}
