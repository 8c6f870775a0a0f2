import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { DocexError } from '../core/errors.js';

/**
 * One agent per state folder: two agents on one journal would each submit the same files. The lock
 * is a file holding the owner's pid; it is made complete under a private name and then hard-linked
 * into place, which fails atomically when another holder exists. A lock whose pid is gone on this
 * host is stale and taken over (a crashed agent must not need a human to restart).
 */

export const LOCK_FILE_NAME = 'agent.lock';

export interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: string;
}

export interface JournalLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** The lock this one replaced, when it was stale. */
  readonly tookOverFrom: LockOwner | undefined;
  release(): void;
}

export interface LockOptions {
  pid?: number;
  /** Whether a pid runs on this host; injectable for tests. */
  isAlive?: (pid: number) => boolean;
  now?: () => number;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else, which still means alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireJournalLock(stateDir: string, options: LockOptions = {}): JournalLock {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, LOCK_FILE_NAME);
  const owner: LockOwner = {
    pid: options.pid ?? process.pid,
    hostname: hostname(),
    startedAt: new Date((options.now ?? Date.now)()).toISOString(),
  };
  const isAlive = options.isAlive ?? processAlive;
  const text = `${JSON.stringify(owner)}\n`;
  const tmp = `${path}.${owner.pid}.${process.hrtime.bigint()}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  try {
    let tookOverFrom: LockOwner | undefined;
    for (let round = 0; round < 3; round++) {
      if (tryLink(tmp, path)) return held(path, owner, text, tookOverFrom);
      const seen = readLock(path);
      if (seen === undefined) continue; // released between our link and our read
      const current = parseOwner(seen);
      if (current && (current.hostname !== owner.hostname || isAlive(current.pid))) {
        throw lockedError(path, current);
      }
      // Stale (or unreadable): move it aside under a private name, then check it is what we judged.
      const aside = `${path}.${owner.pid}.stale`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      const moved = readLock(aside);
      if (moved !== seen) {
        // Someone else took it over between our read and our rename: put theirs back.
        if (moved !== undefined && !tryLink(aside, path)) throw lockedError(path, parseOwner(moved));
        unlinkQuiet(aside);
        continue;
      }
      unlinkQuiet(aside);
      tookOverFrom = current ?? undefined;
    }
    throw lockedError(path, parseOwner(readLock(path) ?? ''));
  } finally {
    unlinkQuiet(tmp);
  }
}

/** Holds the lock while `fn` runs; released even when it throws. */
export async function withJournalLock<T>(
  stateDir: string,
  fn: (lock: JournalLock) => Promise<T> | T,
  options: LockOptions = {},
): Promise<T> {
  const lock = acquireJournalLock(stateDir, options);
  try {
    return await fn(lock);
  } finally {
    lock.release();
  }
}

function held(
  path: string,
  owner: LockOwner,
  text: string,
  tookOverFrom: LockOwner | undefined,
): JournalLock {
  let released = false;
  return {
    path,
    owner,
    tookOverFrom,
    release() {
      if (released) return;
      released = true;
      // Only our own lock is removed: a takeover after a long pause (it looked stale) is not ours.
      if (readLock(path) === text) unlinkQuiet(path);
    },
  };
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockOwner>;
    if (typeof v.pid === 'number' && typeof v.hostname === 'string') {
      return { pid: v.pid, hostname: v.hostname, startedAt: String(v.startedAt ?? '') };
    }
  } catch {}
  return undefined;
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}

function lockedError(path: string, owner: LockOwner | undefined): DocexError {
  const who = owner ? `pid ${owner.pid} on ${owner.hostname} since ${owner.startedAt}` : 'another process';
  return new DocexError('DOCEX_JOURNAL_LOCKED', `the state folder is in use by ${who} (${path})`, {
    details: { lockFile: path, ...(owner ? { pid: owner.pid, hostname: owner.hostname } : {}) },
  });
}
