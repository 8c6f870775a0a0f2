import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocexError, isDocexError } from '../../src/core/errors.js';
import { acquireJournalLock, LOCK_FILE_NAME, withJournalLock } from '../../src/journal/lock.js';

let dir: string;
let lockPath: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'docex-lock-'));
  lockPath = join(dir, LOCK_FILE_NAME);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function lockedBy(fn: () => unknown): DocexError {
  try {
    fn();
  } catch (err) {
    if (isDocexError(err, 'DOCEX_JOURNAL_LOCKED')) return err;
    throw err;
  }
  throw new Error('expected DOCEX_JOURNAL_LOCKED');
}

const writeOwner = (pid: number, host = hostname()) =>
  writeFileSync(lockPath, JSON.stringify({ pid, hostname: host, startedAt: '2026-11-21T10:00:00.000Z' }));

describe('journal lock', () => {
  it('holds a 0600 lock file naming this pid, and refuses a second holder', () => {
    const lock = acquireJournalLock(dir);
    expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({
      pid: process.pid,
      hostname: hostname(),
    });
    expect(statSync(lockPath).mode & 0o777).toBe(0o600);
    const err = lockedBy(() => acquireJournalLock(dir));
    expect(err.message).toContain(`pid ${process.pid}`);
    expect(err.details).toMatchObject({ pid: process.pid, lockFile: lockPath });
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
    acquireJournalLock(dir).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses while another live process holds it, takes it over once that process is gone', async () => {
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    writeOwner(holder.pid!);
    expect(lockedBy(() => acquireJournalLock(dir)).details).toMatchObject({ pid: holder.pid });
    holder.kill('SIGKILL');
    await exited;
    const lock = acquireJournalLock(dir);
    expect(lock.tookOverFrom?.pid).toBe(holder.pid);
    expect(JSON.parse(readFileSync(lockPath, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over a stale lock of a dead pid and an unreadable lock file', () => {
    const dead = spawnSync('true').pid;
    writeOwner(dead);
    const lock = acquireJournalLock(dir);
    expect(lock.tookOverFrom).toMatchObject({ pid: dead });
    lock.release();
    writeFileSync(lockPath, 'garbage');
    const again = acquireJournalLock(dir);
    expect(again.tookOverFrom).toBeUndefined();
    again.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('never judges a pid of another host stale (it cannot check it)', () => {
    writeOwner(spawnSync('true').pid, 'some-other-host');
    expect(lockedBy(() => acquireJournalLock(dir)).message).toContain('some-other-host');
  });

  it('uses the injected liveness check', () => {
    writeOwner(4242);
    expect(() => acquireJournalLock(dir, { isAlive: () => true })).toThrow(DocexError);
    acquireJournalLock(dir, { isAlive: () => false }).release();
  });

  it('release leaves a lock that is no longer its own', () => {
    const lock = acquireJournalLock(dir);
    writeOwner(1); // taken over by someone who judged us stale
    lock.release();
    expect(existsSync(lockPath)).toBe(true);
  });

  it('withJournalLock releases when the work throws', async () => {
    await expect(
      withJournalLock(dir, () => {
        expect(existsSync(lockPath)).toBe(true);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(lockPath)).toBe(false);
  });
});
