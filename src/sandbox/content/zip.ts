import path from 'node:path';
import yauzl from 'yauzl';
import { type ContentResult, collect, fail, type ItemOrProblem, MAX_PARSE_BYTES } from './types.js';

const MAX_ZIP_ENTRIES = 10_000;

/** One item per entry with the extension; other entries (folders, readme files) are ignored. */
export async function zipItems(
  filePath: string,
  ext: string,
  toItem: (data: Buffer, entryPath: string) => Promise<ItemOrProblem> | ItemOrProblem,
): Promise<ContentResult> {
  const zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: true });
  const results: ItemOrProblem[] = [];
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/') || path.extname(entry.fileName).toLowerCase() !== ext) continue;
      if (results.length >= MAX_ZIP_ENTRIES)
        return fail('TOO_MANY_ENTRIES', `more than ${MAX_ZIP_ENTRIES} entries`);
      if (entry.uncompressedSize > MAX_PARSE_BYTES) {
        results.push(`${entry.fileName} is over the sandbox's parse limit`);
        continue;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
      results.push(await toItem(Buffer.concat(chunks), entry.fileName));
    }
  } finally {
    zip.close();
  }
  return collect(results);
}
