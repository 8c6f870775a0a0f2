import { readFile, stat } from 'node:fs/promises';
import type { Issue } from '../../domain/wire.js';

/**
 * What an uploaded file becomes (decisions.md, Jobs): the sending events it yields, each with its
 * recipient, the text that decides its deterministic outcome, and its original document. A file
 * the workflow cannot read yields an error instead, and the job fails.
 */
export interface ContentItem {
  sourceRef: string;
  recipient: string;
  /** Text searched for "reject"/"fail" to choose the outcome when none is forced. */
  outcomeHint: string;
  /** The item's own original; absent when the uploaded file itself is the original. */
  original?: { name: string; contentType: string; data: Buffer };
  /** Why its sending cannot succeed (a PDF without its recipient): the event ends in FAILURE with it. */
  failure?: Issue;
}

export type ContentResult = { ok: true; items: ContentItem[] } | { ok: false; code: string; message: string };

/** A file read item by item: how many items went to the sink, or why the file cannot be read. */
export type ReadResult = { ok: true; count: number } | { ok: false; code: string; message: string };

/** Takes the items of a file one by one, in order; a promise holds the reading back until it settles. */
export type ItemSink = (item: ContentItem) => Promise<void> | undefined | void;

/** An item, or the reason this part of the file could not be read. */
export type ItemOrProblem = ContentItem | string;

/** In-memory parsing is fine for a sandbox, within these bounds. */
export const MAX_PARSE_BYTES = 256 * 1024 * 1024;
export const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/;

export const fail = (code: string, message: string): { ok: false; code: string; message: string } => ({
  ok: false,
  code,
  message,
});

export async function readBounded(filePath: string): Promise<Buffer> {
  const { size } = await stat(filePath);
  if (size > MAX_PARSE_BYTES) throw new Error(`file of ${size} bytes is over the sandbox's parse limit`);
  return readFile(filePath);
}

/** All items, or one failure naming every part that could not be read. */
export function collect(results: ItemOrProblem[]): ContentResult {
  const problems = results.filter((r): r is string => typeof r === 'string');
  if (problems.length > 0) return fail('UNREADABLE_FILE', problems.join('; '));
  const items = results as ContentItem[];
  if (items.length === 0) return fail('NO_DOCUMENTS', 'the file holds no document to send');
  return { ok: true, items };
}
