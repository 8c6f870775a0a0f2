import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

export interface FileDigest {
  /** Lower-case hex. */
  sha256: string;
  /** Bytes actually read, which is what the hash covers (not a separate stat). */
  size: number;
}

/** SHA-256 of a file, streamed so multi-GB files cost one buffer of memory. */
export async function hashFile(filePath: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(filePath, { highWaterMark: 1 << 20 })) {
    const buf = chunk as Buffer;
    size += buf.length;
    hash.update(buf);
  }
  return { sha256: hash.digest('hex'), size };
}
