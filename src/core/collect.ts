/**
 * A young-generation GC on request, when node runs with --expose-gc (the launchers' flags,
 * src/ops/node-flags.ts); nothing without it.
 *
 * Streaming a large file allocates a Buffer per chunk outside V8's heap. Each is garbage a moment
 * later, but its small JS object barely fills the young generation, so V8 collected them only
 * after tens of MiB had piled up, and the malloc arena kept that high-water mark: the 1 GiB
 * upload's resident set sat at 149 MiB for its whole length, against 125 MiB with a minor GC every
 * 16 MiB (0.3 ms each, median of 50 in a small heap; up to 6 ms).
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
