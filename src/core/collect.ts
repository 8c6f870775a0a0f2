/**
 * A young-generation GC on request, when node runs with --expose-gc (the launchers' flags,
 * src/ops/node-flags.ts); nothing without it.
 *
 * Streaming a large file allocates a Buffer per chunk outside V8's heap. Each is garbage a moment
 * later, but its small JS object barely fills the young generation, so V8 collected them only
 * after tens of MiB had piled up, and the malloc arena kept that high-water mark. A cheap minor GC
 * every few MiB keeps the resident set lower.
 * Figures: docs/benchmarks.md#figures-behind-choices-in-the-code.
 */
type GcFunction = (options: { type: 'minor' }) => void;

function collectYoungGarbage(): void {
  (globalThis as { gc?: GcFunction }).gc?.({ type: 'minor' });
}

/** Calls collectYoungGarbage() once per `everyBytes` counted through `passed()`. */
export class GarbagePacer {
  private sinceCollect = 0;

  constructor(private readonly everyBytes: number) {}

  passed(bytes: number): void {
    this.sinceCollect += bytes;
    if (this.sinceCollect < this.everyBytes) return;
    this.sinceCollect = 0;
    collectYoungGarbage();
  }
}
