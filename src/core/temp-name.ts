import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/**
 * This process as a writer of output folders: agents on several hosts (or processes) may share
 * one output folder and write the same status file or proof at once, each through its own temp
 * file (tempBaseName's `writer`).
 */
export const PROCESS_WRITER = randomBytes(4).toString('hex');

/**
 * The temp names' writer of an agent on a shared output folder: the same for every start of the
 * agent of this host and state folder (one runs there at a time), so a restart's sweep removes
 * what its killed start left, and differs between agents, so none touches another's write.
 */
export function placeWriter(stateDir: string): string {
  return writerOfPlace(`${os.hostname()}:${path.resolve(stateDir)}`);
}

/**
 * The writer of the agent at `place` (an agents-table place: `host:stateDir`, the state folder
 * resolved), so the temp files an agent that died left can be named and removed.
 */
export function writerOfPlace(place: string): string {
  const colon = place.indexOf(':');
  // Host and folder hashed apart as before places were read from the agents table: an upgraded
  // agent keeps its writer, and its start's sweep still finds what its killed start left.
  return createHash('sha256')
    .update(`${place.slice(0, colon)}\0${place.slice(colon + 1)}`)
    .digest('hex')
    .slice(0, 8);
}

/**
 * The hidden name a write uses before its final rename: short and fixed-length (a name built from
 * a long target could pass 255 bytes), and the same for every attempt at one target, so a temp
 * file left by a crash is overwritten and renamed away by the next write of that target instead
 * of staying beside the outputs for ever. `target` is the full final path (two targets that share
 * a staging folder get two names). `writer`: 8 hex digits naming the writing process, where
 * several processes may write one target at once (agents sharing an output folder): each its own
 * temp file, never one truncating the other's.
 */
export function tempBaseName(target: string, kind = 'tmp', writer?: string): string {
  const hash = createHash('sha256').update(target).digest('hex').slice(0, 12);
  return `.docex-${hash}${writer ? `-${writer}` : ''}.${kind}`;
}
