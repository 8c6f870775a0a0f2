/**
 * The agent harness with the follower on a fast schedule: every second of the shared ManualClock,
 * minimum interval one clock second, the loop sleeping a few real ms. `pump` moves the clock a
 * step at a time until a condition holds, so sandbox events and follower polls both move.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentConfigInput } from '../../../src/config/index.js';
import type { StatusDocument } from '../../../src/returns/status-files.js';
import type { Harness } from '../../pipeline/support/agent-harness.js';

export const FAST_FOLLOW = {
  schedule: '* * * * * *',
  firstPollMs: 0,
  minIntervalMs: 1000,
  maxIntervalMs: 4000,
};

export function returnsConfig(
  h: Harness,
  follow: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    follow: { ...FAST_FOLLOW, ...follow },
    statuses: { target: { type: 'local', path: statusDir(h) } },
    proofs: { target: { type: 'local', path: proofDir(h) } },
    ...extra,
  } as AgentConfigInput['returns'];
}

export const statusDir = (h: Harness) => path.join(h.dir, 'out', 'statuses');
export const proofDir = (h: Harness) => path.join(h.dir, 'out', 'proofs');
export const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function readStatus(h: Harness, relPath: string): StatusDocument | undefined {
  const file = path.join(statusDir(h), relPath);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** Advances the shared clock by `stepMs` at a time (real pauses between) until `check` holds. */
export async function pump<T>(
  h: Harness,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: {
    stepMs?: number;
    timeoutMs?: number;
    pauseMs?: number;
    /** False while the clock must stand still (a test's own clock jump decides what expires). */
    mayAdvance?: () => boolean;
  } = {},
): Promise<T> {
  const end = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    if (options.mayAdvance?.() !== false) await h.advance(options.stepMs ?? 1000);
    await new Promise((r) => setTimeout(r, options.pauseMs ?? 15));
  }
}

/** The proof paths a status file names (undefined for one not written yet), ORIGINAL documents left out. */
export function proofsOf(status: StatusDocument): (string | undefined)[] {
  return status.jobs.flatMap((j) =>
    j.sendingEvents.flatMap((e) => e.documents.filter((d) => d.type !== 'ORIGINAL').map((d) => d.proof)),
  );
}

/** The status file once final with every proof written. */
export function finalWithProofs(h: Harness, relPath: string): StatusDocument | undefined {
  const s = readStatus(h, relPath);
  return s?.final && proofsOf(s).every(Boolean) ? s : undefined;
}
