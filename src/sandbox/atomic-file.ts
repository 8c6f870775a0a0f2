import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes `data` under a temporary name, fsyncs it and renames it into place, so a reader (or a
 * restart after a crash) sees the whole file or none of it.
 */
export function writeFileAtomicSync(file: string, data: Uint8Array | string, mode = 0o600): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** A secret on disk: owner read/write only, also when the file already existed with wider rights. */
export function writeSecretFile(file: string, value: string): void {
  writeFileAtomicSync(file, value, 0o600);
  chmodSync(file, 0o600);
}
