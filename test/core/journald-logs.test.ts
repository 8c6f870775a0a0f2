import { closeSync, fstatSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { DocexError } from '../../src/core/errors.js';
import { compactError, isExpectedError } from '../../src/core/log-errors.js';
import { createLogger, stdoutIsJournal } from '../../src/core/logger.js';

function capture(options: { syslogPrefix?: boolean; level?: string } = {}) {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const log = createLogger({ level: options.level ?? 'trace', destination, ...options });
  return { log, lines: () => chunks.join('').split('\n').filter(Boolean) };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8443'), { code: 'ECONNREFUSED', errno: -111 });

describe('logs for journald', () => {
  it('names levels instead of numbering them', () => {
    const { log, lines } = capture();
    log.warn('disk nearly full');
    log.error('write failed');
    expect(lines().map((l) => JSON.parse(l).level)).toEqual(['warn', 'error']);
  });

  it('starts each line with the syslog priority of its level when asked', () => {
    const { log, lines } = capture({ syslogPrefix: true });
    log.trace('t');
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    log.fatal('f');
    const out = lines();
    expect(out.map((l) => l.slice(0, 3))).toEqual(['<7>', '<7>', '<6>', '<4>', '<3>', '<2>']);
    // Each line once, the JSON after the prefix intact.
    expect(out.map((l) => JSON.parse(l.slice(3)).msg)).toEqual(['t', 'd', 'i', 'w', 'e', 'f']);
  });

  it('writes no prefix by default to a destination of its own', () => {
    const { log, lines } = capture();
    log.info('plain');
    expect(lines()[0]!.startsWith('{')).toBe(true);
  });

  describe('stdoutIsJournal', () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    it('is true only when JOURNAL_STREAM names the very stream the fd is', () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-journal-'));
      dirs.push(dir);
      const fd = openSync(path.join(dir, 'out'), 'w');
      const other = openSync(path.join(dir, 'other'), 'w');
      try {
        const st = fstatSync(fd);
        const stream = `${st.dev}:${st.ino}`;
        expect(stdoutIsJournal({ JOURNAL_STREAM: stream }, fd)).toBe(true);
        // Redirected elsewhere (systemd's variable inherited by a child writing to a file).
        expect(stdoutIsJournal({ JOURNAL_STREAM: stream }, other)).toBe(false);
        expect(stdoutIsJournal({}, fd)).toBe(false);
      } finally {
        closeSync(fd);
        closeSync(other);
      }
    });
  });
});

describe('expected errors in logs', () => {
  it('logs a network failure as one record with code and causes, without a stack', () => {
    const { log, lines } = capture();
    const err = new ApiError('DOCEX_NETWORK', 'POST /jobs: no answer', {
      method: 'POST',
      route: '/jobs',
      cause: refused(),
    });
    log.warn({ err }, 'create failed');
    const line = lines()[0]!;
    const logged = JSON.parse(line).err;
    expect(logged).toMatchObject({
      type: 'ApiError',
      code: 'DOCEX_NETWORK',
      message: 'POST /jobs: no answer',
      cause: 'connect ECONNREFUSED 127.0.0.1:8443',
    });
    expect(line).not.toContain('stack');
    expect(line).not.toContain('    at ');
  });

  it('names the code of a cause whose message does not', () => {
    const err = new DocexError('DOCEX_LOCAL_IO', 'proof not written', {
      cause: Object.assign(new Error('no space left'), { code: 'ENOSPC' }),
    });
    expect(compactError(err)['cause']).toBe('no space left (ENOSPC)');
  });

  it('keeps the stack of a bug: an error without a code, or a coded error caused by one', () => {
    const { log, lines } = capture();
    log.error({ err: new TypeError("Cannot read properties of undefined (reading 'id')") }, 'bug');
    log.error({ err: new DocexError('DOCEX_LOCAL_IO', 'wrapped', { cause: new RangeError('bad') }) }, 'bug');
    for (const line of lines()) expect(JSON.parse(line).err.stack).toContain('    at ');
    expect(isExpectedError(Object.assign(new Error('x'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
    expect(isExpectedError(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toBe(
      true,
    );
  });
});
