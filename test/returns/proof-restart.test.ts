/**
 * A proof left `writing` by a crash: the file in place counts as the proof only when it has the
 * document's size. Real returns.sqlite and local target; the download is scripted.
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostPace } from '../../src/api/host-pace.js';
import { Pacing } from '../../src/api/pacing.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { CallGate } from '../../src/returns/call-gate.js';
import { fetchDocument, type ProofDeps, type ProofsClient } from '../../src/returns/proofs.js';
import type { ReturnsStore } from '../../src/returns/store.js';
import { recordOneDueProof } from './support/record-poll.js';
import { oneJobStore } from './support/scripted.js';

const clock = new ManualClock();
const PROOF = Buffer.from('%PDF-1.7 whole proof\n');
const PATH = '2026-11-21/inv-1/se_1-DELIVERY_PROOF.pdf';
let dir: string;
let store: ReturnsStore;

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-proof-restart-'));
  store = await oneJobStore(dir, clock.now());
  await recordOneDueProof(store, { size: PROOF.length, path: PATH }, clock.now());
  // The crash: `writing` recorded, then the process died.
  await store.markDocumentWriting({ sendingEventId: 'se_1', fileReference: 'ref-a' });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function setup(inPlace: Buffer) {
  const root = path.join(dir, 'proofs');
  mkdirSync(path.join(root, path.dirname(PATH)), { recursive: true });
  writeFileSync(path.join(root, PATH), inPlace);
  const downloads: string[] = [];
  const client: ProofsClient = {
    downloadUrl: async () => ({ url: 'https://127.0.0.1/blob/ref-a' }),
    downloadFile: async (url, target) => {
      downloads.push(url);
      writeFileSync(target, PROOF);
      return { md5: 'md5', size: PROOF.length };
    },
  };
  const deps: ProofDeps = {
    client,
    store,
    target: new LocalTarget(root),
    gate: new CallGate(
      new HostPace(clock, new Pacing({ concurrency: 4 }), silentLogger(), { maxSleepMs: 1 }),
    ),
    tempDir: path.join(dir, 'returns-tmp'),
    log: silentLogger(),
    now: () => clock.now(),
  };
  return { deps, downloads, file: path.join(root, PATH) };
}

const writingDoc = async () => (await store.documentsOfEvent('se_1'))[0]!;

describe('a proof left writing by a crash', () => {
  it('is fetched again when the file in place is shorter than the document', async () => {
    const { deps, downloads, file } = setup(PROOF.subarray(0, 5));
    expect((await writingDoc()).state).toBe('writing');
    await expect(fetchDocument(deps, await writingDoc(), {})).resolves.toBe('written');
    expect(downloads).toHaveLength(1);
    expect(readFileSync(file)).toEqual(PROOF);
    expect((await writingDoc()).state).toBe('done');
  });

  it('counts as done without a download when the file in place has the document size', async () => {
    const { deps, downloads } = setup(PROOF);
    await expect(fetchDocument(deps, await writingDoc(), {})).resolves.toBe('already-there');
    expect(downloads).toEqual([]);
    expect((await writingDoc()).state).toBe('done');
  });
});
