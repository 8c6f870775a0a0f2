/** One stat of a pending file, turned into the plain observation the stability core decides on. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { markerNamesFor, markerSuffixes, type Observation, type StabilityRule } from './stability.js';

export type FileLook =
  | { kind: 'file'; obs: Observation }
  | { kind: 'gone' }
  /** Never followed: a link would let anyone who can write the drop folder submit any file we can read. */
  | { kind: 'symlink' }
  /** A sub-folder: not ours to take. */
  | { kind: 'directory' }
  /** FIFO, socket, device: never opened (opening a FIFO would block). */
  | { kind: 'special' };

export type ProbeReadable = (filePath: string) => Promise<boolean>;

/** Can we open it for reading right now? O_NOFOLLOW/O_NONBLOCK so a swapped-in link or FIFO cannot fool or stall us. */
export async function canOpen(filePath: string): Promise<boolean> {
  try {
    const handle = await fs.open(
      filePath,
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK,
    );
    await handle.close();
    return true;
  } catch {
    return false;
  }
}

export async function lstatOrUndefined(p: string) {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export async function lookAt(
  dir: string,
  name: string,
  rule: StabilityRule,
  probeReadable: ProbeReadable = canOpen,
): Promise<FileLook> {
  const filePath = path.join(dir, name);
  const st = await lstatOrUndefined(filePath);
  if (st === undefined) return { kind: 'gone' };
  if (st.isSymbolicLink()) return { kind: 'symlink' };
  if (st.isDirectory()) return { kind: 'directory' };
  if (!st.isFile()) return { kind: 'special' };
  const obs: Observation = { size: st.size, mtimeMs: st.mtimeMs, readable: await probeReadable(filePath) };
  for (const marker of markerNamesFor(name, markerSuffixes(rule))) {
    const ms = await lstatOrUndefined(path.join(dir, marker));
    if (ms?.isFile()) {
      obs.marker = { name: marker, mtimeMs: ms.mtimeMs };
      break;
    }
  }
  return { kind: 'file', obs };
}
