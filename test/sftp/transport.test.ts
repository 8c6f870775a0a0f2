/**
 * The SFTP transport against a real OpenSSH sshd: control operations, checked downloads and
 * atomic uploads. Remote paths are absolute paths on this machine, so the test can look at the
 * server's side of every file directly.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { openSftpServer, type SftpServerOptions } from '../../src/sftp/server.js';
import { SftpSession } from '../../src/sftp/session.js';
import type { SftpServer } from '../../src/sftp/types.js';
import { caughtDocex } from '../api/support/caught.js';
import { sshdEndpoint } from '../sources/sftp/support/endpoint.js';
import { sampleWhile } from '../sources/sftp/support/sample-while.js';
import { describeSshd, startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
/** The file's size, or -1 while it does not exist. */
const sizeOrAbsent = (file: string) => (existsSync(file) ? statSync(file).size : -1);

describeSshd('SFTP transport on a server that refuses rename and remove (internal-sftp -P)', () => {
  let sshd: TestSshd;
  let server: SftpServer;

  beforeAll(async () => {
    sshd = await startSshd({ sftpArgs: ['-P', 'rename,posix-rename,remove'] });
    server = openSftpServer(sshdEndpoint(sshd), { log: silentLogger() });
  });
  afterAll(async () => {
    await server?.close();
    await sshd?.stop();
  });

  it('rename is DOCEX_SFTP_RENAME_REFUSED and the file stays where it was', async () => {
    writeFileSync(path.join(sshd.files, 'a.pdf'), 'A');
    const err = await caughtDocex(
      server.rename(path.join(sshd.files, 'a.pdf'), path.join(sshd.files, 'b.pdf')),
    );
    expect(err.code).toBe('DOCEX_SFTP_RENAME_REFUSED');
    expect(readFileSync(path.join(sshd.files, 'a.pdf'), 'utf8')).toBe('A');
  });

  it('remove is DOCEX_SFTP_PERMISSION', async () => {
    writeFileSync(path.join(sshd.files, 'keep.pdf'), 'K');
    const err = await caughtDocex(server.remove(path.join(sshd.files, 'keep.pdf')));
    expect(err.code).toBe('DOCEX_SFTP_PERMISSION');
    expect(existsSync(path.join(sshd.files, 'keep.pdf'))).toBe(true);
  });

  it('uploadAtomic cannot place the file: DOCEX_SFTP_RENAME_REFUSED, and the target name never appears', async () => {
    mkdirSync(path.join(sshd.files, 'out'));
    const err = await caughtDocex(server.uploadAtomic('data', path.join(sshd.files, 'out', 'x.csv')));
    expect(err.code).toBe('DOCEX_SFTP_RENAME_REFUSED');
    expect(existsSync(path.join(sshd.files, 'out', 'x.csv'))).toBe(false);
  });
});

describeSshd('SFTP transport (real sshd)', () => {
  let sshd: TestSshd;
  let local: string;
  const servers: SftpServer[] = [];
  let n = 0;
  /** A fresh folder on the server for each test. */
  let remote: string;

  beforeAll(async () => {
    sshd = await startSshd();
    local = mkdtempSync(path.join(os.tmpdir(), 'docex-sftp-local-'));
  });
  afterAll(async () => {
    await sshd?.stop();
    rmSync(local, { recursive: true, force: true });
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  function open(options: Partial<SftpServerOptions> = {}): SftpServer {
    const server = openSftpServer(sshdEndpoint(sshd), { log: silentLogger(), ...options });
    servers.push(server);
    return server;
  }
  function fresh(): string {
    remote = path.join(sshd.files, `t${++n}`);
    mkdirSync(remote);
    return remote;
  }

  describe('control operations', () => {
    it('lists files, folders and symlinks with their size and mtime, without . and ..', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.pdf'), Buffer.alloc(1234));
      utimesSync(path.join(dir, 'a.pdf'), 1_700_000_000, 1_700_000_000);
      mkdirSync(path.join(dir, 'sub'));
      symlinkSync('a.pdf', path.join(dir, 'link.pdf'));
      const entries = await open().list(dir);
      const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
      expect(Object.keys(byName).sort()).toEqual(['a.pdf', 'link.pdf', 'sub']);
      expect(byName['a.pdf']).toEqual({
        name: 'a.pdf',
        type: 'file',
        size: 1234,
        mtimeMs: 1_700_000_000_000,
      });
      expect(byName.sub?.type).toBe('dir');
      expect(byName['link.pdf']?.type).toBe('symlink');
    });

    it('lists a folder of 2,000 files completely (read in batches through a handle)', async () => {
      const dir = fresh();
      for (let i = 0; i < 2000; i++) writeFileSync(path.join(dir, `f${i}.pdf`), '');
      const entries = await open().list(dir);
      expect(entries).toHaveLength(2000);
      expect(new Set(entries.map((e) => e.name)).size).toBe(2000);
    });

    it('stat returns the entry, or undefined for a missing path', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'x.txt'), 'hello');
      const server = open();
      expect(await server.stat(path.join(dir, 'x.txt'))).toMatchObject({
        name: 'x.txt',
        type: 'file',
        size: 5,
      });
      expect(await server.stat(path.join(dir, 'missing'))).toBeUndefined();
    });

    it('listing a missing folder fails with DOCEX_SFTP_NOT_FOUND', async () => {
      const err = await caughtDocex(open().list(path.join(sshd.files, 'no-such-folder')));
      expect(err.code).toBe('DOCEX_SFTP_NOT_FOUND');
      expect(err.details).toMatchObject({
        op: 'list',
        server: `sftp://${sshd.username}@127.0.0.1:${sshd.port}`,
      });
    });

    it('runs control operations one at a time on one connection, even when called in parallel', async () => {
      const dir = fresh();
      for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `f${i}`), 'x');
      const inFlight = new Map<SftpSession, number>();
      let most = 0;
      const server = open({
        openSession: async (endpoint, log) => {
          const session = await SftpSession.open(endpoint, log);
          const request = session.request.bind(session);
          session.request = ((run: Parameters<typeof request>[0]) => {
            const now = (inFlight.get(session) ?? 0) + 1;
            inFlight.set(session, now);
            most = Math.max(most, now);
            return request(run).finally(() => inFlight.set(session, (inFlight.get(session) ?? 1) - 1));
          }) as typeof session.request;
          return session;
        },
      });
      const results = await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => server.stat(path.join(dir, `f${i}`))),
        server.list(dir),
        server.mkdirp(path.join(dir, 'a', 'b')),
      ]);
      expect(results.slice(0, 20).every((r) => r !== undefined)).toBe(true);
      expect(inFlight.size).toBe(1);
      expect(most).toBe(1);
    });

    it('rename moves a file into another folder', async () => {
      const dir = fresh();
      mkdirSync(path.join(dir, '.processing'));
      writeFileSync(path.join(dir, 'a.pdf'), 'A');
      await open().rename(path.join(dir, 'a.pdf'), path.join(dir, '.processing', 'a.pdf'));
      expect(existsSync(path.join(dir, 'a.pdf'))).toBe(false);
      expect(readFileSync(path.join(dir, '.processing', 'a.pdf'), 'utf8')).toBe('A');
    });

    it('rename never replaces an existing file: DOCEX_SFTP_TARGET_EXISTS, both files unchanged', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.pdf'), 'A');
      writeFileSync(path.join(dir, 'b.pdf'), 'B');
      const err = await caughtDocex(open().rename(path.join(dir, 'a.pdf'), path.join(dir, 'b.pdf')));
      expect(err.code).toBe('DOCEX_SFTP_TARGET_EXISTS');
      expect(readFileSync(path.join(dir, 'a.pdf'), 'utf8')).toBe('A');
      expect(readFileSync(path.join(dir, 'b.pdf'), 'utf8')).toBe('B');
    });

    it('renaming a missing file fails with DOCEX_SFTP_NOT_FOUND', async () => {
      const dir = fresh();
      const err = await caughtDocex(open().rename(path.join(dir, 'gone.pdf'), path.join(dir, 'x.pdf')));
      expect(err.code).toBe('DOCEX_SFTP_NOT_FOUND');
    });

    it('mkdirp creates nested folders and accepts existing ones; a file in the way is an error', async () => {
      const dir = fresh();
      const server = open();
      await server.mkdirp(path.join(dir, 'a', 'b', 'c'));
      await server.mkdirp(path.join(dir, 'a', 'b', 'c'));
      expect(statSync(path.join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
      writeFileSync(path.join(dir, 'file'), '');
      const err = await caughtDocex(server.mkdirp(path.join(dir, 'file', 'sub')));
      expect(err.code).toBe('DOCEX_SFTP_IO');
    });

    it('remove deletes a file; a missing file is DOCEX_SFTP_NOT_FOUND', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.pdf'), 'A');
      const server = open();
      await server.remove(path.join(dir, 'a.pdf'));
      expect(existsSync(path.join(dir, 'a.pdf'))).toBe(false);
      expect((await caughtDocex(server.remove(path.join(dir, 'a.pdf')))).code).toBe('DOCEX_SFTP_NOT_FOUND');
    });
  });

  describe('download', () => {
    it('downloads the exact bytes, split over the pool for a big file, and leaves no .part file', async () => {
      const dir = fresh();
      const data = randomBytes(6 * 1024 * 1024 + 12_345);
      writeFileSync(path.join(dir, 'big.bin'), data);
      const server = open({
        transfers: 3,
        tuning: { requestSize: 32 * 1024, outstanding: 8, splitAbove: 1024 * 1024 },
      });
      const target = path.join(local, `big-${n}.bin`);
      expect(await server.download(path.join(dir, 'big.bin'), target, data.length)).toEqual({
        bytes: data.length,
      });
      expect(md5(readFileSync(target))).toBe(md5(data));
      expect(readdirSync(local).filter((f) => f.endsWith('.part'))).toEqual([]);
    });

    it('downloads an empty file', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'empty.pdf'), '');
      const target = path.join(local, `empty-${n}.pdf`);
      expect(await open().download(path.join(dir, 'empty.pdf'), target, 0)).toEqual({ bytes: 0 });
      expect(statSync(target).size).toBe(0);
    });

    it('a file shorter than the listing said is DOCEX_SFTP_SIZE_MISMATCH and nothing is left locally', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.bin'), randomBytes(100_000));
      const target = path.join(local, `short-${n}.bin`);
      const err = await caughtDocex(open().download(path.join(dir, 'a.bin'), target, 100_001));
      expect(err.code).toBe('DOCEX_SFTP_SIZE_MISMATCH');
      expect(existsSync(target)).toBe(false);
      expect(readdirSync(local).filter((f) => f.startsWith(`short-${n}`))).toEqual([]);
    });

    it('a file longer than the listing said (it grew) is DOCEX_SFTP_SIZE_MISMATCH, not a truncated copy', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'a.bin'), randomBytes(100_000));
      const target = path.join(local, `long-${n}.bin`);
      const err = await caughtDocex(open().download(path.join(dir, 'a.bin'), target, 99_999));
      expect(err.code).toBe('DOCEX_SFTP_SIZE_MISMATCH');
      expect(existsSync(target)).toBe(false);
    });

    it('downloading a missing file is DOCEX_SFTP_NOT_FOUND', async () => {
      const dir = fresh();
      const err = await caughtDocex(open().download(path.join(dir, 'gone'), path.join(local, 'gone'), 10));
      expect(err.code).toBe('DOCEX_SFTP_NOT_FOUND');
    });

    it('the local file never appears partially: it is absent until it is complete', async () => {
      const dir = fresh();
      const size = 24 * 1024 * 1024;
      writeFileSync(path.join(dir, 'big.bin'), randomBytes(size));
      const target = path.join(local, `watch-${n}.bin`);
      const sizesSeen = new Set<number>();
      await sampleWhile(
        () => sizesSeen.add(sizeOrAbsent(target)),
        () =>
          open({ tuning: { requestSize: 32 * 1024, outstanding: 4 } }).download(
            path.join(dir, 'big.bin'),
            target,
            size,
          ),
      );
      expect([...sizesSeen].sort((a, b) => a - b)).toEqual([-1, size]);
    });

    it('an aborted download stops with DOCEX_STOPPING, removes its .part file, and the server stays usable', async () => {
      const dir = fresh();
      const size = 32 * 1024 * 1024;
      writeFileSync(path.join(dir, 'big.bin'), randomBytes(size));
      const server = open({ transfers: 1, tuning: { requestSize: 16 * 1024, outstanding: 2 } });
      const controller = new AbortController();
      const target = path.join(local, `abort-${n}.bin`);
      const pending = server.download(path.join(dir, 'big.bin'), target, size, controller.signal);
      setTimeout(() => controller.abort(), 50);
      expect((await caughtDocex(pending)).code).toBe('DOCEX_STOPPING');
      expect(readdirSync(local).filter((f) => f.startsWith(`abort-${n}`))).toEqual([]);
      writeFileSync(path.join(dir, 'small.bin'), 'small');
      await server.download(path.join(dir, 'small.bin'), target, 5);
      expect(readFileSync(target, 'utf8')).toBe('small');
    });

    it('runs more downloads than pool connections in parallel, each complete, while control calls go on', async () => {
      const dir = fresh();
      const files = Array.from({ length: 6 }, (_, i) => ({
        name: `f${i}.bin`,
        data: randomBytes(300_000 + i),
      }));
      for (const f of files) writeFileSync(path.join(dir, f.name), f.data);
      const server = open({ transfers: 2 });
      const downloads = files.map((f) =>
        server.download(path.join(dir, f.name), path.join(local, `par-${n}-${f.name}`), f.data.length),
      );
      const listing = await server.list(dir);
      await Promise.all(downloads);
      expect(listing).toHaveLength(6);
      for (const f of files)
        expect(md5(readFileSync(path.join(local, `par-${n}-${f.name}`)))).toBe(md5(f.data));
    });
  });

  describe('uploadAtomic', () => {
    it('writes text and bytes under the final name, leaving no temporary file', async () => {
      const dir = fresh();
      const server = open();
      await server.uploadAtomic('hello\n', path.join(dir, 'a.txt'));
      await server.uploadAtomic(new Uint8Array([1, 2, 3]), path.join(dir, 'b.bin'));
      expect(readFileSync(path.join(dir, 'a.txt'), 'utf8')).toBe('hello\n');
      expect([...readFileSync(path.join(dir, 'b.bin'))]).toEqual([1, 2, 3]);
      expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.bin']);
    });

    it('replaces an existing file', async () => {
      const dir = fresh();
      writeFileSync(path.join(dir, 'status.csv'), 'old');
      await open().uploadAtomic('new', path.join(dir, 'status.csv'));
      expect(readFileSync(path.join(dir, 'status.csv'), 'utf8')).toBe('new');
    });

    it('a reader never sees a partial file: the name is absent, then complete', async () => {
      const dir = fresh();
      const data = randomBytes(8 * 1024 * 1024);
      const target = path.join(dir, 'proof.pdf');
      const sizesSeen = new Set<number>();
      // A slow stream in 64 KiB pieces: the upload takes many turns.
      await sampleWhile(
        () => sizesSeen.add(sizeOrAbsent(target)),
        () =>
          open().uploadAtomic(
            () =>
              Readable.from(
                (function* () {
                  for (let i = 0; i < data.length; i += 65_536) yield data.subarray(i, i + 65_536);
                })(),
              ),
            target,
          ),
      );
      expect(md5(readFileSync(target))).toBe(md5(data));
      expect([...sizesSeen].sort((a, b) => a - b)).toEqual([-1, data.length]);
    });

    it('puts the temporary file in tempDir when given', async () => {
      const dir = fresh();
      mkdirSync(path.join(dir, 'staging'));
      mkdirSync(path.join(dir, 'out'));
      const seenInOut = new Set<string>();
      await sampleWhile(
        () => {
          for (const f of readdirSync(path.join(dir, 'out'))) seenInOut.add(f);
        },
        () =>
          open().uploadAtomic(randomBytes(2 * 1024 * 1024), path.join(dir, 'out', 'x.xml'), {
            tempDir: path.join(dir, 'staging'),
          }),
      );
      expect([...seenInOut]).toEqual(['x.xml']);
      expect(readdirSync(path.join(dir, 'staging'))).toEqual([]);
    });

    it('a stream that fails leaves no file behind and says DOCEX_SFTP_IO', async () => {
      const dir = fresh();
      const failing = () =>
        new Readable({
          read() {
            this.destroy(new Error('disk read failed'));
          },
        });
      const err = await caughtDocex(open().uploadAtomic(failing, path.join(dir, 'x.pdf')));
      expect(err.code).toBe('DOCEX_SFTP_IO');
      expect(readdirSync(dir)).toEqual([]);
    });
  });
});
