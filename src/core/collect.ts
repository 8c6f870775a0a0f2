/**
 * Garbage collections the agent asks for, when node runs with --expose-gc (the launchers' flags,
 * src/ops/node-flags.ts); nothing without it.
 *
 * Streaming a large file allocates a Buffer per chunk outside V8's heap. Each is garbage a moment
 * later, but its small JS object barely fills the young generation, so V8 collected them only
 * after many had piled up, and the malloc arena kept that high-water mark. A cheap minor GC at a
 * fixed interval of streamed bytes (the uploader's) keeps the resident set lower.
 *
 * At rest, the launchers turn V8's memory reducer off (--no-memory-reducer): it shrank the heap
 * with a full GC 100 s after the last one, up to three times, whatever the agent was doing, so an
 * idle agent spent most of its CPU in it. The IdleCollector does that work once per quiet spell
 * instead, and only when the heap has grown since it last ran.
 * Figures: docs/benchmarks.md#figures-behind-choices-in-the-code and its Idle section.
 */
import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { Logger } from './logger.js';

type GcOptions = { type: 'minor' } | { type: 'major'; execution: 'sync'; flavor?: 'last-resort' };
type GcFunction = (options: GcOptions) => void;

function exposedGc(): GcFunction | undefined {
  return (globalThis as { gc?: GcFunction }).gc;
}

/**
 * Calls a GC once per `every` units (bytes, events) counted through `passed()`: a young-generation
 * one by default; a full one (`major`) for work whose garbage lives long enough to be promoted.
 *
 * A job of thousands of sending events is polled a page at a time, and each page's objects live
 * across its store calls, so they reach the old generation. V8's incremental marking, on the
 * agent's one GC thread, did not finish before a big job's pages had grown the heap several times
 * over, and the pages it then freed stayed in V8's pool (the memory reducer, which gives them
 * back, is off): the agent's resident set grew with the size of the night. A full GC every few
 * pages keeps the heap at what one page needs. Figures: docs/benchmarks.md, the return path.
 */
export class GarbagePacer {
  private sinceCollect = 0;

  constructor(
    private readonly every: number,
    private readonly type: 'minor' | 'major' = 'minor',
  ) {}

  passed(units: number): void {
    this.sinceCollect += units;
    if (this.sinceCollect < this.every) return;
    this.sinceCollect = 0;
    exposedGc()?.(this.type === 'minor' ? { type: 'minor' } : { type: 'major', execution: 'sync' });
  }
}

/** How often the idle collector looks: each look is one wake-up of the event loop. */
export const IDLE_CHECK_MS = 15_000;
/** A spell is quiet when the event loop was busy less than this share of it. */
export const QUIET_BUSY_SHARE = 0.01;
/**
 * Growth of the used heap since the last collection that is worth a collection: above the young
 * generation (4 MiB semi-spaces), so the garbage of an idle agent's rescans and polls alone waits
 * for V8's own collections.
 */
export const WORTH_COLLECTING_BYTES = 8 * 1024 ** 2;

export interface HeapProbe {
  /** Share of the time since the last call that the event loop was busy, 0 to 1. */
  busyShare(): number;
  usedHeapBytes(): number;
  /** A full GC that gives memory back (V8's "last resort": what the memory reducer did). */
  collect(): void;
}

export class IdleCollector {
  private usedAfterCollect: number | undefined;

  constructor(private readonly probe: HeapProbe) {}

  /** One look: collects when the last spell was quiet and the heap has grown; says what it did. */
  check(): { usedBefore: number; usedAfter: number } | undefined {
    if (this.probe.busyShare() >= QUIET_BUSY_SHARE) return undefined;
    const usedBefore = this.probe.usedHeapBytes();
    if (this.usedAfterCollect !== undefined && usedBefore < this.usedAfterCollect + WORTH_COLLECTING_BYTES)
      return undefined;
    this.probe.collect();
    this.usedAfterCollect = this.probe.usedHeapBytes();
    return { usedBefore, usedAfter: this.usedAfterCollect };
  }
}

/** The probe of this process; undefined when node runs without --expose-gc. */
export function processHeapProbe(): HeapProbe | undefined {
  const gc = exposedGc();
  if (!gc) return undefined;
  let last = performance.eventLoopUtilization();
  return {
    busyShare() {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return share;
    },
    usedHeapBytes: () => getHeapStatistics().used_heap_size,
    collect: () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' }),
  };
}

/** Looks every IDLE_CHECK_MS until stopped; nothing when node runs without --expose-gc. */
export function startIdleCollection(log: Logger, probe = processHeapProbe()): () => void {
  if (!probe) return () => {};
  const collector = new IdleCollector(probe);
  const timer = setInterval(() => {
    const started = performance.now();
    const collected = collector.check();
    if (collected)
      log.debug({ ...collected, ms: Math.round(performance.now() - started) }, 'idle heap collected');
  }, IDLE_CHECK_MS).unref();
  return () => clearInterval(timer);
}
