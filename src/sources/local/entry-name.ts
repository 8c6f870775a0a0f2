/**
 * Folder entries read as bytes. A name that is not valid UTF-8 (a Latin-1 `facture-é.pdf` from an
 * old ERP) decodes to a string with U+FFFD that no later lstat or rename can reach: such an entry
 * keeps its raw bytes so it can still be moved, and is never silently left behind.
 */
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { nameBytesAreUtf8 } from '../../domain/file-names.js';

export interface EntryName {
  /** The name as UTF-8 text (lossy, with U+FFFD, when `raw` is set). */
  name: string;
  /** Set only when the bytes are not valid UTF-8: the one way to reach the entry. */
  raw?: Buffer;
}

export function nameOfBytes(bytes: Buffer): EntryName {
  const name = bytes.toString('utf8');
  // Invalid sequences decode to U+FFFD; a real U+FFFD in the name is valid UTF-8.
  return nameBytesAreUtf8(bytes) ? { name } : { name, raw: bytes };
}

/** The path of an entry of `dir`, by its bytes when its name has no UTF-8 form. */
export function entryPath(dir: string, entry: EntryName): string | Buffer {
  if (entry.raw === undefined) return path.join(dir, entry.name);
  return Buffer.concat([Buffer.from(`${dir}${path.sep}`, 'utf8'), entry.raw]);
}

/**
 * Streams a folder's entries with their names read as bytes (`opendir` with the "buffer" encoding,
 * which @types/node does not list). Breaking out of the loop closes the handle.
 */
export async function* readEntries(
  dir: string,
  bufferSize: number,
): AsyncGenerator<{ entry: EntryName; dirent: Dirent }> {
  const handle = await fs.opendir(dir, { bufferSize, encoding: 'buffer' as BufferEncoding });
  for await (const dirent of handle) {
    yield { entry: nameOfBytes(dirent.name as unknown as Buffer), dirent };
  }
}
