/** Pure parts of the transport: request sizing, range splitting, names, error mapping. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DocexError } from '../../src/core/errors.js';
import {
  DEFAULT_TUNING,
  downloadFile,
  effectiveTuning,
  partName,
  splitRanges,
  widenWindow,
} from '../../src/sftp/download.js';
import { sftpOpError } from '../../src/sftp/errors.js';
import { tempNameFor } from '../../src/sftp/remote-ops.js';
import { describeEndpoint, entryType, type SftpSession } from '../../src/sftp/session.js';

/**
 * Fault injection: a session whose server answers every READ with at most `maxAnswer` bytes (legal
 * in SFTP, seen on some servers), so the download has to ask again for the rest.
 */
function shortReadingSession(content: Buffer, maxAnswer: number): SftpSession {
  type Done = (err: Error | undefined, value?: unknown) => void;
  const sftp = {
    _maxReadLen: 65_536,
    open: (_p: string, _f: string, done: Done) => setImmediate(() => done(undefined, Buffer.from('h'))),
    read: (_h: Buffer, buf: Buffer, off: number, len: number, pos: number, done: Done) =>
      setImmediate(() =>
        done(
          undefined,
          content.copy(buf, off, pos, Math.min(pos + Math.min(len, maxAnswer), content.length)),
        ),
      ),
  };
  return {
    sftp,
    description: 'sftp://fake@h:22',
    request: <T>(run: (done: (err: Error | null | undefined, value: T) => void) => void) =>
      new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value)))),
    closeHandle: async () => {},
  } as unknown as SftpSession;
}

describe('download sizing', () => {
  it('keeps requests within the server limit and the same bytes in flight', () => {
    const base = { ...DEFAULT_TUNING, requestSize: 261_120, outstanding: 16, splitAbove: 1 };
    expect(effectiveTuning(base, 261_120)).toMatchObject({ requestSize: 261_120, outstanding: 16 });
    expect(effectiveTuning(base, 32_768)).toMatchObject({ requestSize: 32_768, outstanding: 128 });
    expect(effectiveTuning(base, undefined)).toMatchObject({ requestSize: 32_768 });
  });

  it('splits a file into contiguous aligned ranges covering every byte once', () => {
    const ranges = splitRanges(10_000_001, 3, 65_536);
    expect(ranges[0]?.[0]).toBe(0);
    expect(ranges.at(-1)?.[1]).toBe(10_000_001);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]?.[0]).toBe(ranges[i - 1]?.[1]);
    for (const [start] of ranges) expect(start % 65_536).toBe(0);
    expect(ranges.length).toBeLessThanOrEqual(3);
    expect(splitRanges(0, 2, 65_536)).toEqual([[0, 0]]);
    expect(splitRanges(100, 4, 65_536)).toEqual([[0, 100]]);
  });

  it('widens a channel window below half the target, and leaves other shapes alone', () => {
    const adjustments: Array<[number, number]> = [];
    const channel = {
      incoming: { window: 1_000_000 },
      outgoing: { id: 7, state: 'open' },
      _client: { _protocol: { channelWindowAdjust: (id: number, n: number) => adjustments.push([id, n]) } },
    };
    widenWindow(channel, 16_000_000);
    expect(adjustments).toEqual([[7, 15_000_000]]);
    expect(channel.incoming.window).toBe(16_000_000);
    widenWindow(channel, 16_000_000);
    expect(adjustments).toHaveLength(1);
    expect(() => widenWindow({}, 16_000_000)).not.toThrow();
  });
});

describe('download over a server that answers short reads', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-short-read-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('asks again for the rest of every short answer and gets the exact bytes', async () => {
    const content = randomBytes(300_000);
    const target = path.join(dir, 'a.bin');
    const bytes = await downloadFile({
      sessions: [shortReadingSession(content, 10_000), shortReadingSession(content, 7_000)],
      remotePath: '/a.bin',
      localPath: target,
      expectedSize: content.length,
      tuning: { ...DEFAULT_TUNING, requestSize: 32_768, outstanding: 4 },
      server: 'sftp://fake@h:22',
    });
    expect(bytes).toBe(content.length);
    expect(readFileSync(target).equals(content)).toBe(true);
    expect(readdirSync(dir)).toEqual(['a.bin']);
  });
});

describe('flushing behind the download', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-flush-behind-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => vi.restoreAllMocks());

  async function fileHandlePrototype(): Promise<{ datasync(): Promise<void> }> {
    const handle = await fs.open(path.join(dir, 'probe'), 'w');
    await handle.close();
    return Object.getPrototypeOf(handle) as { datasync(): Promise<void> };
  }

  const download = (content: Buffer, target: string) =>
    downloadFile({
      sessions: [shortReadingSession(content, 32_768)],
      remotePath: '/a.bin',
      localPath: target,
      expectedSize: content.length,
      tuning: { ...DEFAULT_TUNING, requestSize: 32_768, outstanding: 4, flushBehindBytes: 128 * 1024 },
      server: 'sftp://fake@h:22',
    });

  it('starts disk flushes while the download runs, not only the final fsync', async () => {
    const datasync = vi.spyOn(await fileHandlePrototype(), 'datasync');
    const content = randomBytes(2 * 1024 * 1024);
    const target = path.join(dir, 'flushed.bin');
    expect(await download(content, target)).toBe(content.length);
    expect(readFileSync(target).equals(content)).toBe(true);
    // 2 MiB in 128 KiB steps, one flush at a time (the final fsync is not a datasync): 1 to 16.
    expect(datasync.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(datasync.mock.calls.length).toBeLessThanOrEqual(16);
  });

  it('a background flush that fails fails the download and leaves no file behind', async () => {
    vi.spyOn(await fileHandlePrototype(), 'datasync').mockRejectedValue(
      Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }),
    );
    const target = path.join(dir, 'unflushed.bin');
    await expect(download(randomBytes(1024 * 1024), target)).rejects.toThrow(/EIO/);
    expect(readdirSync(dir).filter((f) => f.startsWith('unflushed'))).toEqual([]);
  });
});

describe('names and descriptions', () => {
  it('temporary names are hidden, one per target, and beside the file or in tempDir', () => {
    expect(partName('/spool/a.pdf')).toMatch(/^\/spool\/a\.pdf\.[0-9a-f]{8}\.part$/);
    expect(tempNameFor('/out/a.pdf')).toMatch(/^\/out\/\.docex-[0-9a-f]{12}\.tmp$/);
    expect(tempNameFor('/out/a.pdf', '/staging')).toMatch(/^\/staging\/\.docex-[0-9a-f]{12}\.tmp$/);
    // The same for every attempt at one target (a crash's leftover is replaced), another for another.
    expect(tempNameFor('/out/a.pdf')).toBe(tempNameFor('/out/a.pdf'));
    expect(tempNameFor('/out/a.pdf', '/staging')).not.toBe(tempNameFor('/out/b.pdf', '/staging'));
    // A writer's own (agents sharing an output folder): one per target and writer.
    expect(tempNameFor('/out/a.pdf', undefined, '0badcafe')).toMatch(
      /^\/out\/\.docex-[0-9a-f]{12}-0badcafe\.tmp$/,
    );
    expect(tempNameFor('/out/a.pdf', undefined, '0badcafe')).not.toBe(
      tempNameFor('/out/a.pdf', undefined, 'cafe0bad'),
    );
  });

  it('describes a server without secrets, brackets an IPv6 host', () => {
    expect(describeEndpoint({ host: 'h', port: 22, username: 'u' })).toBe('sftp://u@h:22');
    expect(describeEndpoint({ host: '::1', port: 2222, username: 'u' })).toBe('sftp://u@[::1]:2222');
  });

  it('file types come from the mode bits', () => {
    expect(entryType(0o100644)).toBe('file');
    expect(entryType(0o040755)).toBe('dir');
    expect(entryType(0o120777)).toBe('symlink');
    expect(entryType(0o010644)).toBe('other');
  });
});

describe('error mapping', () => {
  const err = (code?: number) => Object.assign(new Error('x'), code === undefined ? {} : { code });
  it.each([
    [2, 'DOCEX_SFTP_NOT_FOUND'],
    [3, 'DOCEX_SFTP_PERMISSION'],
    [4, 'DOCEX_SFTP_IO'],
    [undefined, 'DOCEX_SFTP_CONNECT'],
  ])('SFTP status %s → %s', (status, code) => {
    const mapped = sftpOpError('stat', '/a', 'sftp://u@h:22', err(status));
    expect(mapped.code).toBe(code);
    expect(mapped.details).toMatchObject({ op: 'stat', remotePath: '/a', server: 'sftp://u@h:22' });
  });

  it('passes a DocexError through unchanged', () => {
    const original = new DocexError('DOCEX_SFTP_SIZE_MISMATCH', 'm');
    expect(sftpOpError('download', '/a', 's', original)).toBe(original);
  });
});
