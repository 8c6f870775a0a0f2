import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, stat } from 'node:fs/promises';

export interface FileDigest {
  /** Lower-case hex. */
  sha256: string;
  /** Bytes actually read, which is what the hash covers (not a separate stat). */
  size: number;
}

const HASH_CHUNK_BYTES = 1024 * 1024;

/**
 * SHA-256 of a file, read into two reused buffers: the next read runs in the thread pool while
 * this thread hashes the last one. A multi-GB file costs two buffers of memory and leaves no
 * garbage (a read stream allocates a new chunk per read).
 * Figures: docs/benchmarks.md#figures-behind-choices-in-the-code.
 */
export async function hashFile(filePath: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let current = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  let next = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  let size = 0;
  const handle = await open(filePath, 'r');
  try {
    let reading = handle.read(current, 0, HASH_CHUNK_BYTES, null);
    for (;;) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) break;
      reading = handle.read(next, 0, HASH_CHUNK_BYTES, null);
      size += bytesRead;
      hash.update(current.subarray(0, bytesRead));
      [current, next] = [next, current];
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), size };
}

export interface ReadFile extends FileDigest {
  mtimeMs: number;
  /** The size a stat saw: another `size` than the bytes read means the file changed meanwhile. */
  statSize: number;
  /** The whole content, for a regular file of at most `holdMaxBytes`. */
  bytes?: Buffer;
}

/**
 * Hash, size and mtime of a file from one descriptor (opened without following a link), keeping
 * the bytes of a small file so the checks that follow need not read it again: a burst of small
 * files costs one open and one read each instead of several. A link, anything but a regular file,
 * or a file that grows past the limit while read is hashed by path as before (and kept nothing),
 * so the inspection sees it and rejects it for what it is.
 */
export async function readAndHash(filePath: string, holdMaxBytes: number): Promise<ReadFile> {
  const handle = await open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!handle) return byPath(filePath);
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size > holdMaxBytes) return byPath(filePath);
    // One byte more than expected tells a file that grew since the stat.
    const buffer = Buffer.allocUnsafe(st.size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > st.size) return byPath(filePath);
    const bytes = buffer.subarray(0, filled);
    return {
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: filled,
      mtimeMs: st.mtimeMs,
      statSize: st.size,
      bytes,
    };
  } finally {
    await handle.close();
  }
}

async function byPath(filePath: string): Promise<ReadFile> {
  const digest = await hashFile(filePath);
  const st = await stat(filePath);
  return { ...digest, mtimeMs: st.mtimeMs, statSize: st.size };
}
