/**
 * The items of an uploaded file as the reading worker hands them to the sandbox: the originals
 * written one after another into one pack file (one write and one fsync for a million CSV rows,
 * not a million), and one JSON line per item naming its slice of the pack. The sandbox reads the
 * lines back a batch at a time, so neither side holds every item of a big file at once.
 */

import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { open, rm, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { NamesProfile } from '../../domain/names-profile.js';
import type { Issue } from '../../domain/wire.js';
import { readUpload, type UploadInput } from './index.js';
import type { PdfIdentifierRule } from './pdf-identifiers.js';
import type { ContentItem, ReadResult } from './types.js';

export interface SpooledItem {
  sourceRef: string;
  recipient: string;
  outcomeHint: string;
  /** Where its own original lies in the pack; absent when the uploaded file is the original. */
  original?: { name: string; contentType: string; offset: number; size: number };
  failure?: Issue;
}

export interface SpoolPaths {
  /** The originals, back to back; removed when no item has one. */
  pack: string;
  /** One SpooledItem per line (JSON). */
  items: string;
}

/** What the reading worker is asked: the upload as plain values (a PDF reading's rules, not its reader). */
export interface SpoolTask {
  filePath: string;
  filename: string;
  inputSourceType: string;
  pdf?: { rules: PdfIdentifierRule[]; names: NamesProfile };
  paths: SpoolPaths;
}

/** Bytes gathered before one write: a write per CSV row costs more than reading the row. */
const CHUNK_BYTES = 256 * 1024;

/** A file written in chunks; `add` answers a promise when the stream wants the writer to wait. */
class ChunkedFile {
  private readonly stream: WriteStream;
  private parts: Buffer[] = [];
  private size = 0;

  constructor(file: string) {
    this.stream = createWriteStream(file, { mode: 0o600 });
  }

  add(data: Buffer): Promise<void> | undefined {
    this.parts.push(data);
    this.size += data.length;
    if (this.size < CHUNK_BYTES) return undefined;
    this.flush();
    return this.stream.writableNeedDrain ? once(this.stream, 'drain').then(() => undefined) : undefined;
  }

  private flush(): void {
    if (this.size > 0) this.stream.write(Buffer.concat(this.parts, this.size));
    this.parts = [];
    this.size = 0;
  }

  async end(): Promise<void> {
    if (this.stream.closed) return;
    this.flush();
    this.stream.end();
    await once(this.stream, 'close');
  }
}

/** Reads `input` into the pack and the item lines; the pack is on disk (fsynced) when it answers ok. */
export async function spoolUpload(input: UploadInput, paths: SpoolPaths): Promise<ReadResult> {
  const pack = new ChunkedFile(paths.pack);
  const items = new ChunkedFile(paths.items);
  let offset = 0;
  const waits: Array<Promise<void> | undefined> = [];
  // Synchronous while the files take more; a promise (reading held back) while one drains.
  const sink = (item: ContentItem): Promise<void> | undefined => {
    const line: SpooledItem = {
      sourceRef: item.sourceRef,
      recipient: item.recipient,
      outcomeHint: item.outcomeHint,
    };
    if (item.original) {
      const { name, contentType, data } = item.original;
      line.original = { name, contentType, offset, size: data.length };
      offset += data.length;
      waits.push(pack.add(data));
    }
    if (item.failure) line.failure = item.failure;
    waits.push(items.add(Buffer.from(`${JSON.stringify(line)}\n`)));
    const pending = waits.filter((w) => w !== undefined);
    waits.length = 0;
    return pending.length > 0 ? Promise.all(pending).then(() => undefined) : undefined;
  };
  let result: ReadResult;
  try {
    result = await readUpload(input, sink);
  } finally {
    await Promise.all([pack.end(), items.end()]);
  }
  if (!result.ok) {
    await Promise.all([rm(paths.pack, { force: true }), rm(paths.items, { force: true })]);
    return result;
  }
  if ((await stat(paths.pack)).size === 0) {
    await rm(paths.pack, { force: true });
  } else {
    const handle = await open(paths.pack, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return result;
}

/** The spooled items in order, from the line after the first `skip`. */
export async function* readSpool(itemsPath: string, skip = 0): AsyncGenerator<SpooledItem> {
  const lines = createInterface({
    input: createReadStream(itemsPath, { encoding: 'utf8' }),
    crlfDelay: Infinity,
  });
  let n = 0;
  try {
    for await (const line of lines) {
      if (line === '' || n++ < skip) continue;
      yield JSON.parse(line) as SpooledItem;
    }
  } finally {
    lines.close();
  }
}
