/**
 * Two agents' followers on one returns store (several agents on one journal) fetching the same
 * due document: the first to start claims it, the other (its list of due documents read a moment
 * before) leaves it alone, neither downloading nor writing it; a claim whose writer died is taken
 * once it ran out. Real returns.sqlite (the claim's statement is the same on PostgreSQL: the store
 * conformance tests) and a local target shared by both; downloads are scripted.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostPace } from '../../src/api/host-pace.js';
import { Pacing } from '../../src/api/pacing.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import type { OutputTarget } from '../../src/outputs/types.js';
import { CallGate } from '../../src/returns/call-gate.js';
import { fetchDocument, type ProofDeps, type ProofsClient } from '../../src/returns/proofs.js';
import type { DocumentRow, ReturnsStore } from '../../src/returns/store.js';
import { recordOneDueProof } from './support/record-poll.js';
import { oneJobStore } from './support/scripted.js';

const clock = new ManualClock();
const PROOF = Buffer.from('%PDF-1.7 the proof\n');
const PATH = '2026-11-27/inv-1/se_1-DELIVERY_PROOF.pdf';
const CLAIM_MS = 60_000;
let dir: string;
let store: ReturnsStore;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-proof-claim-'));
  store = await oneJobStore(dir, clock.now());
  await recordOneDueProof(store, { size: PROOF.length, path: PATH }, clock.now());
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An agent's proof deps on the shared store and proofs folder; `hold` keeps its downloads open until released. */
function agent(name: string, hold = false) {
  const downloads: string[] = [];
  const writes: string[] = [];
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let downloading: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    downloading = resolve;
  });
  const client: ProofsClient = {
    downloadUrl: async () => ({ url: 'https://127.0.0.1/blob/ref-a' }),
    downloadFile: async (url, target) => {
      downloads.push(url);
      downloading();
      if (hold) await released;
      writeFileSync(target, PROOF);
      return { md5: 'md5', size: PROOF.length };
    },
  };
  const local = new LocalTarget(path.join(dir, 'proofs'));
  const target: OutputTarget = {
    description: local.description,
    write: (p, content) => {
      writes.push(p);
      return local.write(p, content);
    },
    exists: (p) => local.exists(p),
    sizeOf: (p) => local.sizeOf(p),
    close: () => local.close(),
  };
  const deps: ProofDeps = {
    client,
    store,
    target,
    gate: new CallGate(
      new HostPace(clock, new Pacing({ concurrency: 4 }), silentLogger(), { maxSleepMs: 1 }),
    ),
    tempDir: path.join(dir, `returns-tmp-${name}`),
    log: silentLogger(),
    now: () => clock.now(),
    claimMs: CLAIM_MS,
  };
  return { deps, downloads, writes, release, started };
}

const due = async (): Promise<DocumentRow> => {
  const [row] = await store.dueDocuments(clock.now(), 10);
  if (!row) throw new Error('no document due');
  return row;
};

describe('a proof due on two agents at once', () => {
  it('is fetched and written by the agent that started first; the other leaves it, while it is written and after', async () => {
    const a = agent('a', true);
    const b = agent('b');
    // Both listed it due before either started on it.
    const seenByA = await due();
    const seenByB = await due();
    const first = fetchDocument(a.deps, seenByA, {});
    await a.started;
    await expect(fetchDocument(b.deps, seenByB, {})).resolves.toBe('left');
    a.release();
    await expect(first).resolves.toBe('written');
    await expect(fetchDocument(b.deps, seenByB, {})).resolves.toBe('left');
    expect(b.downloads).toEqual([]);
    expect([...a.writes, ...b.writes]).toEqual([PATH]);
    expect(readFileSync(path.join(dir, 'proofs', PATH))).toEqual(PROOF);
    expect((await store.documentsOfEvent('se_1'))[0]!.state).toBe('done');
  });

  it('is taken by another agent once the claim of a writer that died ran out, not before', async () => {
    // The writer claimed it and died: nothing written, the document left `writing`.
    expect(await store.claimDocument(await due(), { now: clock.now(), ms: CLAIM_MS })).toBeDefined();
    const b = agent('b');
    expect(await store.dueDocuments(clock.now(), 10)).toEqual([]);
    clock.advance(CLAIM_MS);
    const row = await due();
    expect(row.state).toBe('writing');
    await expect(fetchDocument(b.deps, row, {})).resolves.toBe('written');
    expect(b.writes).toEqual([PATH]);
  });

  it('is written only by the agent holding the claim when a slow download outlasted the first one', async () => {
    const a = agent('a', true);
    const b = agent('b');
    const seenByA = await due();
    const first = fetchDocument(a.deps, seenByA, {});
    await a.started;
    // A's download outlasts its claim (a long Retry-After, a slow link): B takes the proof over.
    clock.advance(CLAIM_MS);
    await expect(fetchDocument(b.deps, await due(), {})).resolves.toBe('written');
    a.release();
    await expect(first).resolves.toBe('left');
    expect([...a.writes, ...b.writes]).toEqual([PATH]);
    expect((await store.documentsOfEvent('se_1'))[0]!.state).toBe('done');
  });

  it('renews its own claim for the write when its download outlasted it and nobody took it', async () => {
    const a = agent('a', true);
    const first = fetchDocument(a.deps, await due(), {});
    await a.started;
    clock.advance(CLAIM_MS + 1);
    a.release();
    await expect(first).resolves.toBe('written');
    expect(a.writes).toEqual([PATH]);
  });
});
