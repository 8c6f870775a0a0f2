import { createHash } from 'node:crypto';

/**
 * The hidden name a write uses before its final rename: short and fixed-length (a name built from
 * a long target could pass 255 bytes), and the same for every attempt at one target, so a temp
 * file left by a crash is overwritten and renamed away by the next write of that target instead
 * of staying beside the outputs for ever. `target` is the full final path (two targets that share
 * a staging folder get two names).
 */
export function tempBaseName(target: string, kind = 'tmp'): string {
  return `.docex-${createHash('sha256').update(target).digest('hex').slice(0, 12)}.${kind}`;
}
