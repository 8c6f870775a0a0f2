/** Small steps the journal tests repeat, written against the JournalStore contract only. */
import { isDocexError } from '../../../src/core/errors.js';
import type { JournalItem } from '../../../src/journal/schema.js';
import type { JournalStore } from '../../../src/journal/store.js';
import type { ClaimInput } from '../../../src/journal/types.js';
import { claimInput, sha256 } from './journal-harness.js';

/** Claims a file (claimInput with overrides) and answers its item; anything but a claim fails the test. */
export async function claimed(
  journal: JournalStore,
  overrides: Partial<ClaimInput> = {},
): Promise<JournalItem> {
  const result = await journal.recordClaim(claimInput(overrides));
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
  return result.item;
}

/** Claims a file named `name` whose content is its own (sha256 of the name). */
export async function claimedFile(
  journal: JournalStore,
  name: string,
  overrides: Partial<ClaimInput> = {},
): Promise<JournalItem> {
  return claimed(journal, { fileName: name, sha256: sha256(name), ...overrides });
}

/**
 * The DocexError code a call rejects with; undefined when it resolves. A rejection that is not a
 * DocexError answers its message, so a test expecting a code sees what came instead.
 */
export async function codeOf(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
  } catch (err) {
    return errorCode(err);
  }
  return undefined;
}

/** The DocexError code of an error, or its text when it is not a DocexError. */
export function errorCode(err: unknown): string {
  return isDocexError(err) ? err.code : `not a DocexError: ${String(err)}`;
}

/** claimed → validated → creating → created (with an upload URL and deadline). */
export async function toCreated(
  journal: JournalStore,
  id: number,
  fields: { jobId?: string; uploadUrl?: string; uploadDeadline?: number } = {},
): Promise<JournalItem> {
  await journal.transition(id, 'validated');
  await journal.transition(id, 'creating');
  return journal.transition(id, 'created', {
    jobId: fields.jobId ?? `job-${id}`,
    uploadUrl: fields.uploadUrl ?? 'https://x/u?s=1',
    uploadDeadline: fields.uploadDeadline ?? 1e15,
  });
}

/** A claimed single-file item all the way to done (job `job-<id>`). */
export async function toDone(journal: JournalStore, id: number): Promise<JournalItem> {
  await toCreated(journal, id);
  await journal.transition(id, 'uploaded', { md5: 'm' });
  return journal.transition(id, 'done');
}
