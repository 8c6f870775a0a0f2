import path from 'node:path';
import yauzl from 'yauzl';
import {
  ArchiveNames,
  archiveEntryFault,
  NAME_FAULT_WORDS,
  quoteName,
  recordOfEntry,
} from '../../domain/file-names.js';
import { type ContentResult, collect, fail, type ItemOrProblem, MAX_PARSE_BYTES } from './types.js';

const MAX_ZIP_ENTRIES = 10_000;

/**
 * Why an entry makes the whole archive unusable: the agent's rule for dropped names and entry types
 * (domain/file-names.ts), and one name per entry.
 */
function unsafeEntry(entry: yauzl.Entry, names: ArchiveNames): string | undefined {
  const fault = archiveEntryFault(recordOfEntry(entry));
  const shown = quoteName(entry.fileName);
  if (fault?.kind === 'unsafe-path') return `entry ${shown} has an unsafe path`;
  if (fault?.kind === 'name')
    return `entry ${shown}: the name ${quoteName(fault.segment)} ${NAME_FAULT_WORDS[fault.fault]}`;
  if (fault) return `entry ${shown} is not a regular file or folder`;
  const earlier = names.add(entry.fileName);
  return earlier === undefined ? undefined : `entry ${shown} has the name of an earlier entry`;
}

/** One item per entry with the extension; other entries (folders, readme files) are ignored. */
export async function zipItems(
  filePath: string,
  ext: string,
  toItem: (data: Buffer, entryPath: string) => Promise<ItemOrProblem> | ItemOrProblem,
): Promise<ContentResult> {
  const zip = await yauzl.openPromise(filePath, { lazyEntries: true, autoClose: true });
  const results: ItemOrProblem[] = [];
  const names = new ArchiveNames();
  try {
    for await (const entry of zip.eachEntry()) {
      const unsafe = unsafeEntry(entry, names);
      if (unsafe) return fail('UNSAFE_ENTRY', unsafe);
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
