/**
 * Reading a payload-pdf batch ZIP (PDFs plus index.csv) after inspectFile has judged it safe:
 * index.csv read whole (bounded), PDF entries listed, and one PDF at a time streamed to a temp file
 * beside the claimed ZIP, fsynced and renamed, so the upload streams a plain file of known size.
 */
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import { DocexError } from '../core/errors.js';
import { lazyRequire } from '../core/lazy-require.js';

/** The index is parsed in memory; inspect already rejected a bigger one as a zip bomb, this is a backstop. */
const zipLib = lazyRequire<typeof yauzl>('yauzl');

export const INDEX_MAX_BYTES = 16 * 1024 * 1024;
export const BATCH_INDEX_NAME = 'index.csv';

export interface OpenBatch {
  /** The raw bytes of index.csv, or undefined when the archive has none. */
  index: Buffer | undefined;
  /** PDF entry names in archive order. */
  pdfEntries: string[];
  /** Streams one entry to `target` (temp name, fsync, rename); answers its size. */
  extract(entryName: string, target: string): Promise<number>;
  close(): void;
}

async function readAll(zip: yauzl.ZipFile, entry: yauzl.Entry, maxBytes: number): Promise<Buffer> {
  if (entry.uncompressedSize > maxBytes) {
    throw new DocexError('DOCEX_INPUT_TOO_LARGE', `${entry.fileName} is larger than ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function openBatchZip(zipPath: string): Promise<OpenBatch> {
  const zip = await zipLib().openPromise(zipPath, {
    lazyEntries: true,
    strictFileNames: true,
    autoClose: false,
  });
  const entries = new Map<string, yauzl.Entry>();
  try {
    for await (const entry of zip.eachEntry()) {
      if (!entry.fileName.endsWith('/')) entries.set(entry.fileName, entry);
    }
    const indexEntry = entries.get(BATCH_INDEX_NAME);
    const index = indexEntry ? await readAll(zip, indexEntry, INDEX_MAX_BYTES) : undefined;
    const pdfEntries = [...entries.keys()].filter((n) => path.extname(n).toLowerCase() === '.pdf');
    return {
      index,
      pdfEntries,
      async extract(entryName, target) {
        const entry = entries.get(entryName);
        if (!entry) throw new DocexError('DOCEX_INPUT_BATCH_INDEX', `${entryName} is not in the batch`);
        const temp = `${target}.tmp`;
        // yauzl checks the entry's size and CRC while streaming: a corrupt entry fails here.
        await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(temp, { mode: 0o600 }));
        const handle = await fs.open(temp, 'r+');
        await handle.sync().finally(() => handle.close());
        await fs.rename(temp, target);
        return entry.uncompressedSize;
      },
      close: () => zip.close(),
    };
  } catch (err) {
    zip.close();
    throw err;
  }
}
