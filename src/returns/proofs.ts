/**
 * Fetches one document of a final sending event and writes it through the proofs target: a fresh
 * pre-signed URL, a streamed download to a temp file in the state folder (size checked, nothing
 * partial kept), then the target's own temp-name-and-rename. The store records `writing` before
 * and `done` after: after a crash between the two, a file already in place of the document's size
 * (the rename makes it whole) counts as done and nothing is fetched twice. An expired URL (403) is
 * asked for again. With several agents on one journal, `writing` is a claim (`claimMs`): another
 * agent that listed the document as due a moment before leaves it alone instead of fetching and
 * writing it a second time (a second write would put back a proof the ERP may have taken away).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { CallOptions } from '../api/api-caller.js';
import { isApiError } from '../api/errors.js';
import type { DocexClient } from '../api/index.js';
import type { Logger } from '../core/logger.js';
import type { OutputTarget } from '../outputs/types.js';
import type { CallGate } from './call-gate.js';
import type { DocumentRow, ReturnsStore } from './store.js';

export type ProofsClient = Pick<DocexClient['sendingEvents'], 'downloadUrl' | 'downloadFile'>;

export interface ProofDeps {
  client: ProofsClient;
  store: ReturnsStore;
  target: OutputTarget;
  gate: CallGate;
  /** Folder for downloads in progress (in the state folder). */
  tempDir: string;
  log: Logger;
  now(): number;
  /**
   * Several agents on one journal: how long the document is this agent's once it starts on it
   * (another agent takes it only after that: a writer that died). Absent: the agent is alone.
   */
  claimMs?: number | undefined;
}

/** How many fresh URLs one attempt asks for when the previous one answers 403 (expired). */
const URL_ATTEMPTS = 3;

/** `left`: done, parked, or claimed by another agent meanwhile; nothing fetched, nothing written. */
export type ProofResult = 'written' | 'already-there' | 'left';

/**
 * A file in place after a crash mid-write is this document when its size is the document's (a
 * target renames whole files, but another writer or an older proof may hold the name). Without
 * a known size, or a target that cannot tell sizes, its existence is all there is to go by.
 */
async function writtenWhole(target: OutputTarget, doc: DocumentRow): Promise<boolean> {
  if (doc.size === undefined || !target.sizeOf) return target.exists(doc.path);
  return (await target.sizeOf(doc.path)) === doc.size;
}

export async function fetchDocument(
  deps: ProofDeps,
  doc: DocumentRow,
  fields: Record<string, unknown>,
  options: CallOptions = {},
): Promise<ProofResult> {
  const { store, target, log } = deps;
  const logFields = { ...fields, sendingEventId: doc.sendingEventId, documentType: doc.type };
  if (doc.state === 'writing' && (await writtenWhole(target, doc))) {
    await store.markDocumentDone(doc, undefined, deps.now());
    log.info({ ...logFields, proof: doc.path }, 'proof found written before a restart');
    return 'already-there';
  }
  // Several agents on one journal: a claim (its answer renews it before the write); alone: writing.
  const { claimMs } = deps;
  const held =
    claimMs === undefined ? undefined : await store.claimDocument(doc, { now: deps.now(), ms: claimMs });
  const mayWrite = claimMs === undefined ? await store.markDocumentWriting(doc) : held !== undefined;
  if (!mayWrite) {
    log.debug(logFields, 'proof left alone: written, parked or being written by another agent');
    return 'left';
  }
  await mkdir(deps.tempDir, { recursive: true, mode: 0o700 });
  const temp = path.join(deps.tempDir, `proof-${randomBytes(8).toString('hex')}.part`);
  try {
    let result: { md5: string; size: number } | undefined;
    for (let attempt = 1; !result; attempt++) {
      const { url } = await deps.client.downloadUrl(
        doc.sendingEventId,
        doc.fileReference,
        await deps.gate.take(options),
      );
      try {
        result = await deps.client.downloadFile(
          url,
          temp,
          await deps.gate.take({
            ...(doc.size === undefined ? {} : { expectedSize: doc.size }),
            ...(options.signal ? { signal: options.signal } : {}),
          }),
        );
      } catch (err) {
        if (isApiError(err) && err.status === 403 && attempt < URL_ATTEMPTS) {
          log.info(logFields, 'download URL expired: asking for a new one');
          continue;
        }
        throw err;
      }
    }
    // The waits above (Retry-After, pacing, a slow download) may have outlasted the claim: renewed
    // for the write, or left to the agent that took it meanwhile.
    if (claimMs !== undefined && held !== undefined) {
      if ((await store.claimDocument(doc, { now: deps.now(), ms: claimMs, held })) === undefined) {
        log.info(logFields, 'proof left to another agent: its claim ran out while it was fetched');
        return 'left';
      }
    }
    await target.write(doc.path, () => createReadStream(temp));
    await store.markDocumentDone(doc, result.md5, deps.now());
    log.info({ ...logFields, proof: doc.path, size: result.size }, 'proof written');
    return 'written';
  } finally {
    await rm(temp, { force: true });
  }
}
