/** What a chaos scenario is and answers, and the frame every scenario runs in. */
import type { InvariantReport } from './invariants.js';
import type { ChaosMode } from './modes.js';
import { type ChaosJournal, createWorld, type World, type WorldOptions } from './world.js';

export interface ChaosSizes {
  quick: boolean;
  /** Overrides every scenario's file count. */
  files?: number;
  /** Kills of the kill scenario. */
  kills?: number;
  /** How long the token endpoint stays down, ms. */
  outageMs?: number;
  /** Seed of the random moments (kills, stalls). */
  seed: number;
  /** What is dropped (modes.ts); default single PDFs. */
  mode?: ChaosMode;
  /** A compiled agent CLI (buildAgent), where a scenario starts many agents; default tsx. */
  agentEntry?: string;
  /** Where the agent keeps its journal (default sqlite; the PostgreSQL-only scenarios ignore it). */
  journal?: ChaosJournal;
  /** Faults of the pg-restart and pg-cut scenarios (restarts, cuts). */
  faults?: number;
}

export interface ScenarioResult {
  scenario: string;
  /** The intake mode (modes.ts); absent in reports written before modes existed: single PDFs. */
  mode?: string;
  /** The journal's backend; absent: sqlite (reports written before PostgreSQL). */
  journal?: ChaosJournal;
  fault: string;
  /** How many faults were injected, and of what kind. */
  injected: number;
  injectedDetail: string;
  /** Files that met the fault (the scenario says how it counts them). */
  affected: number;
  files: number;
  durationMs: number;
  report?: InvariantReport | undefined;
  /** The run broke before the checks (a time-out, an agent that would not start). */
  error?: string;
  /** Not run here, and why (no tmpfs, no SFTP source). */
  skipped?: string;
}

export interface Scenario {
  name: string;
  fault: string;
  /** The journals it runs with whatever --journal says (pg-restart, pg-cut: PostgreSQL only). */
  journals?: readonly ChaosJournal[];
  run(sizes: ChaosSizes): Promise<ScenarioResult>;
}

export interface Injected {
  injected: number;
  injectedDetail: string;
  /** Default: the files named in a warning of the agent (a retry, a broken transfer). */
  affected?: number;
}

/** mulberry32: a seeded generator, so a failing run can be replayed with --seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves with the promise, or rejects after `ms` saying what did not happen. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Builds the world, runs the scenario's body in it, checks the invariants, always tears down. */
export async function runInWorld(
  scenario: { name: string; fault: string },
  worldOptions: WorldOptions,
  body: (world: World) => Promise<Injected>,
): Promise<ScenarioResult> {
  const started = Date.now();
  const base = {
    scenario: scenario.name,
    mode: worldOptions.mode?.name ?? 'pdf',
    ...(worldOptions.journal === 'postgres' ? { journal: 'postgres' as const } : {}),
    fault: scenario.fault,
    files: worldOptions.files,
  };
  let world: World | undefined;
  try {
    world = await createWorld(worldOptions);
    const injected = await body(world);
    const report = await world.check({ expectArchived: true });
    return {
      ...base,
      ...injected,
      affected: injected.affected ?? world.affected().size,
      durationMs: Date.now() - started,
      report,
    };
  } catch (err) {
    const report = world ? await world.check({ expectArchived: true }).catch(() => undefined) : undefined;
    return {
      ...base,
      injected: 0,
      injectedDetail: '',
      affected: world?.affected().size ?? 0,
      durationMs: Date.now() - started,
      error: err instanceof Error ? err.message : String(err),
      ...(report ? { report } : {}),
    };
  } finally {
    await world?.close();
  }
}

/** Ends the run: the agent stopped with SIGTERM must exit 0. */
export async function finish(world: World, timeoutMs: number): Promise<void> {
  await world.waitPlaced(timeoutMs);
  const code = await world.stopAgent();
  if (code !== 0)
    throw new Error(`the agent exited ${code} after SIGTERM:\n${world.agents.at(-1)?.tail.join('\n')}`);
}
