/**
 * The SFTP source's own bookkeeping against a real SSH server (ssh2's server over temp folders):
 * where partial downloads live, the mtime a spool copy carries the moment it appears, names the
 * pipeline never took, and failed-download counts of files that left the server.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { JournalItem } from '../../../src/journal/index.js';
import { openSftpServer } from '../../../src/sftp/server.js';
import type { SftpServer } from '../../../src/sftp/types.js';
import {
  type SftpFolderSettings,
  SftpSource,
  type SftpSourceOptions,
  type SpoolFile,
} from '../../../src/sources/sftp/source.js';
import { captureLogger } from '../../api/support/log-capture.js';
import { waitFor } from '../../support/wait-for.js';
import { faultServerEndpoint } from './support/endpoint.js';
import { type FaultServer, startFaultServer } from './support/fault-server.js';

let root: string;
let fault: FaultServer;
let remote: string;
let spool: string;
const open: Array<{ source: SftpSource; server: SftpServer }> = [];

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'docex-sftp-spool-'));
  remote = path.join(root, 'outbox');
  spool = path.join(root, 'spool');
  mkdirSync(remote);
  fault = await startFaultServer();
});

afterEach(async () => {
  for (const { source, server } of open.splice(0)) {
    await source.stop();
    await server.close();
  }
  await fault.stop();
  rmSync(root, { recursive: true, force: true });
});

type Wrap = (server: SftpServer) => SftpServer;

/** An accept that takes every file into `ready`. */
const acceptInto =
  (ready: SpoolFile[]) =>
  (file: SpoolFile): boolean => {
    ready.push(file);
    return true;
  };

function makeSource(
  overrides: Partial<SftpSourceOptions> = {},
  wrap: Wrap = (s) => s,
  settings: Partial<SftpFolderSettings> = {},
): SftpSource {
  const server = wrap(openSftpServer(faultServerEndpoint(fault), { log: captureLogger().log }));
  const source = new SftpSource({
    folder: {
      name: 'remote',
      url: `sftp://${fault.username}@127.0.0.1:${fault.port}${remote}`,
      remotePath: remote,
      include: ['*'],
      exclude: [],
      stability: { kind: 'rename-in' },
      order: 'mtime',
      claim: 'rename',
      afterSuccess: 'archive',
      remoteArchiveDir: path.join(remote, '.archive'),
      remoteErrorDir: path.join(remote, '.error'),
      spoolDir: spool,
      pollIntervalMs: 0,
      ...settings,
    },
    server,
    journal: { byPath: async () => [], holds: () => true },
    clock: new ManualClock(Date.now()),
    log: captureLogger().log,
    accept: () => true,
    errorFiles: () => [],
    ...overrides,
  });
  open.push({ source, server });
  return source;
}

const listDir = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);

describe('sftp source spool', () => {
  it('downloads into the spool .incoming folder: .processing only ever holds complete copies', async () => {
    fault.knobs.readDelayMs = 150;
    writeFileSync(path.join(remote, 'big.pdf'), Buffer.alloc(600 * 1024, 7));
    const ready: SpoolFile[] = [];
    const source = makeSource({
      accept: acceptInto(ready),
    });
    await source.start();
    await source.tick();
    await waitFor(() => listDir(path.join(spool, '.incoming')).length === 1);
    // Mid-download: a kill now must leave nothing the pipeline's recovery would take as a file.
    expect(listDir(path.join(spool, '.processing'))).toEqual([]);
    // A name of its own (the file's may be 255 bytes long already), renamed into .processing once whole.
    expect(listDir(path.join(spool, '.incoming'))[0]).toMatch(/^[0-9a-f]{16}\.ready\.[0-9a-f]{8}\.part$/);
    fault.knobs.readDelayMs = 0;
    await waitFor(() => ready.length === 1);
    expect(listDir(path.join(spool, '.processing'))).toEqual(['big.pdf']);
    expect(listDir(path.join(spool, '.incoming'))).toEqual([]);
  });

  it('downloads nothing into a spool .processing swapped for a symbolic link while running, and reports the folder unsafe', async () => {
    writeFileSync(path.join(remote, 'a.pdf'), 'remote bytes');
    const outside = path.join(root, 'outside');
    mkdirSync(outside);
    const ready: SpoolFile[] = [];
    const unsafe: string[] = [];
    const source = makeSource({
      accept: acceptInto(ready),
      onUnsafe: (err) => {
        unsafe.push(err.code);
      },
    });
    await source.start();
    rmSync(path.join(spool, '.processing'), { recursive: true });
    symlinkSync(outside, path.join(spool, '.processing'));
    await source.tick();
    await waitFor(() => unsafe.length === 1);
    expect(unsafe).toEqual(['DOCEX_FOLDER_UNSAFE']);
    expect(ready).toEqual([]);
    expect(listDir(outside)).toEqual([]);
  });

  it('does not make a missing remote drop folder: each poll fails with DOCEX_SOURCE_FOLDER_MISSING, said once with the folder, path and key, until it is there', async () => {
    rmSync(remote, { recursive: true });
    const { log, lines } = captureLogger();
    const ready: SpoolFile[] = [];
    const source = makeSource(
      {
        log,
        accept: acceptInto(ready),
      },
      undefined,
      { at: 'folders[3]' },
    );
    await source.start();
    await source.tick();
    await source.tick();
    expect(existsSync(remote)).toBe(false);
    const failed = lines().filter((l) => l['msg'] === 'sftp poll failed');
    expect(failed).toEqual([
      expect.objectContaining({ level: 'error', code: 'DOCEX_SOURCE_FOLDER_MISSING' }),
    ]);
    const message = String((failed[0]?.['err'] as { message?: unknown } | undefined)?.message);
    expect(message).toContain(`folder remote: remote drop folder ${remote} on sftp://`);
    expect(message).toContain('(folders[3].source.path) does not exist');
    expect(message).toContain('or set folders[3].create: true');

    // Made by its owner: the next poll takes its files, and says the folder is back.
    mkdirSync(remote);
    writeFileSync(path.join(remote, 'a.pdf'), 'remote bytes');
    await source.tick();
    await waitFor(() => ready.length === 1);
    expect(lines().some((l) => l['msg'] === 'sftp folder reachable again')).toBe(true);
  });

  it('makes a missing remote drop folder when the folder says create: true', async () => {
    rmSync(remote, { recursive: true });
    const { log, lines } = captureLogger();
    const source = makeSource({ log }, undefined, { create: true });
    await source.start();
    await source.tick();
    expect(listDir(remote)).toEqual(['.processing']);
    expect(lines().find((l) => l['msg'] === 'folders created')).toMatchObject({ created: [remote] });
    expect(lines().filter((l) => l['msg'] === 'sftp poll failed')).toEqual([]);
  });

  it('empties .incoming when it starts (partial downloads of a killed run)', async () => {
    mkdirSync(path.join(spool, '.incoming'), { recursive: true });
    writeFileSync(path.join(spool, '.incoming', 'a.pdf.0badf00d.part'), 'half of a');
    const source = makeSource();
    await source.start();
    expect(listDir(path.join(spool, '.incoming'))).toEqual([]);
    expect(listDir(path.join(spool, '.processing'))).toEqual([]);
  });

  it('a spool copy carries the remote mtime from the moment it appears in .processing', async () => {
    const file = path.join(remote, 'old.pdf');
    writeFileSync(file, 'an old invoice');
    const remoteMtime = new Date('2024-03-01T10:00:00Z');
    utimesSync(file, remoteMtime, remoteMtime);
    const seenAtRename: number[] = [];
    // What a crash right after the download's rename would leave: the copy as it is then.
    const wrap: Wrap = (server) =>
      Object.assign(Object.create(server) as SftpServer, {
        download: async (...args: Parameters<SftpServer['download']>) => {
          const result = await server.download(...args);
          seenAtRename.push(statSync(args[1]).mtimeMs);
          return result;
        },
      });
    const ready: SpoolFile[] = [];
    const source = makeSource(
      {
        accept: acceptInto(ready),
      },
      wrap,
    );
    await source.start();
    await source.tick();
    await waitFor(() => ready.length === 1);
    expect(seenAtRename).toEqual([remoteMtime.getTime()]);
  });

  it('forgets names the pipeline did not take, so intake goes on past 64 of them', async () => {
    for (let i = 0; i < 66; i++)
      writeFileSync(path.join(remote, `f${String(i).padStart(2, '0')}.pdf`), `file ${i}`);
    const offered = new Set<string>();
    const source = makeSource({
      transfers: 8,
      accept: (file) => {
        offered.add(file.name);
        return false; // not taken (the pipeline's answer for an unknown folder or while stopping)
      },
    });
    await source.start();
    await waitFor(async () => {
      await source.tick();
      return offered.size === 66;
    }, 20_000);
  });

  it('forgets a name the pipeline lost after taking it (its claim failed)', async () => {
    writeFileSync(path.join(remote, 'a.pdf'), 'a');
    writeFileSync(path.join(remote, 'b.pdf'), 'b');
    const offered: string[] = [];
    const source = makeSource({
      maxInFlight: 1,
      accept: (file, onLost) => {
        offered.push(file.name);
        setTimeout(() => onLost(new Error('claim failed')), 10);
        return true;
      },
    });
    await source.start();
    await waitFor(async () => {
      await source.tick();
      return offered.length === 2;
    });
    expect(offered.sort()).toEqual(['a.pdf', 'b.pdf']);
  });

  it.each([
    ['a flat folder', ''],
    ['a sub-folder', 'acme'],
  ])(
    'frees the in-flight slot of a file in %s whose name the pipeline refuses (U+200E), its remote file in the error folder under its sub-path',
    async (_, sub) => {
      const bad = '\u200Ebad.pdf';
      mkdirSync(path.join(remote, sub), { recursive: true });
      writeFileSync(path.join(remote, sub, bad), 'refused for its name');
      writeFileSync(path.join(remote, 'next.pdf'), 'waits for a free slot');
      // Claimed first: the older one.
      const earlier = new Date(Date.now() - 60_000);
      utimesSync(path.join(remote, sub, bad), earlier, earlier);
      const ready: SpoolFile[] = [];
      const source = makeSource(
        {
          maxInFlight: 1,
          accept: acceptInto(ready),
          errorFiles: () => [{ suffix: '.error.txt', content: 'DOCEX_INPUT_BAD_NAME' }],
        },
        undefined,
        sub === '' ? {} : { recursive: { depth: 1 } },
      );
      await source.start();
      await waitFor(() => ready.length === 1);
      await source.tick();
      expect(ready.map((f) => f.name)).toEqual([bad]);
      const claimed = statSync(path.join(remote, '.processing', sub, bad));
      await source.finished({
        kind: 'file',
        folder: 'remote',
        fileName: bad,
        sourcePath: ready[0]?.originalPath,
        state: 'rejected',
        size: claimed.size,
        mtimeMs: claimed.mtimeMs,
      } as JournalItem);
      expect(listDir(path.join(remote, '.error', sub))).toEqual(
        expect.arrayContaining([bad, `${bad}.error.txt`]),
      );
      expect(existsSync(path.join(remote, '.processing', sub, bad))).toBe(false);
      // Its slot is free: the next file is claimed.
      await waitFor(async () => {
        await source.tick();
        return ready.length === 2;
      });
      expect(ready[1]?.name).toBe('next.pdf');
    },
  );

  it('counts failed downloads afresh for a new file under the name of one that vanished', async () => {
    fault.knobs.denyOpen = new Set(['a.pdf']);
    const capture = captureLogger();
    const failures = () => capture.lines().filter((l) => l.msg === 'download failed');
    const source = makeSource({ maxDownloadAttempts: 2, log: capture.log });
    await source.start();
    writeFileSync(path.join(remote, 'a.pdf'), 'first a');
    await source.tick();
    await waitFor(() => failures().length === 1);
    // The file leaves the server (the ERP took it back); a listing without it prunes its count.
    rmSync(path.join(remote, '.processing', 'a.pdf'));
    await source.tick();
    writeFileSync(path.join(remote, 'a.pdf'), 'second a');
    await source.tick(); // claimed; its download fails: the first failure of this file
    await waitFor(() => failures().length === 2);
    expect(failures()[1]).toMatchObject({ try: 1, of: 2 });
    await source.tick(); // taken again, fails again: refused
    await waitFor(() => listDir(path.join(remote, '.error')).includes('a.pdf'));
    expect(failures()[2]).toMatchObject({ try: 2, of: 2 });
  });

  it('never follows a listed sub-folder name that would leave the drop folder (.., a slash, a NUL)', async () => {
    const outside = path.join(root, 'escape');
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'outside.pdf'), 'not in the drop folder');
    mkdirSync(path.join(remote, 'ok'));
    writeFileSync(path.join(remote, 'ok', 'inside.pdf'), 'in a sub-folder');
    fault.knobs.listAlso = new Map([[remote, ['../escape', 'ok/../../escape', 'x\u0000y', '/tmp']]]);
    const ready: SpoolFile[] = [];
    const source = makeSource(
      {
        accept: acceptInto(ready),
      },
      undefined,
      { recursive: { depth: 3 } },
    );
    await source.start();
    await waitFor(() => ready.length === 1);
    // More polls list the same names: still nothing taken from outside.
    const polled = fault.stats.listings;
    while (fault.stats.listings < polled + 6) await source.tick();
    expect(ready.map((f) => [f.name, f.originalPath.slice(f.originalPath.indexOf(remote))])).toEqual([
      ['inside.pdf', `${remote}/ok/inside.pdf`],
    ]);
    expect(ready[0]?.claimedPath).toBe(path.join(spool, '.processing', 'ok', 'inside.pdf'));
    expect(readdirSync(outside)).toEqual(['outside.pdf']);
    expect(listDir(path.join(remote, '.processing'))).toEqual(['ok']);
  });

  it('skips a sub-folder the server fails to list (SSH_FX_FAILURE), says so once, and takes the rest of the tree', async () => {
    mkdirSync(path.join(remote, 'broken'));
    writeFileSync(path.join(remote, 'broken', 'stuck.pdf'), 'behind a failing listing');
    mkdirSync(path.join(remote, 'ok'));
    writeFileSync(path.join(remote, 'ok', 'inside.pdf'), 'in a sub-folder');
    writeFileSync(path.join(remote, 'top.pdf'), 'at the top');
    fault.knobs.failListing = new Set([path.join(remote, 'broken')]);
    const capture = captureLogger();
    const ready: SpoolFile[] = [];
    const source = makeSource(
      {
        log: capture.log,
        accept: acceptInto(ready),
      },
      undefined,
      { recursive: { depth: 2 } },
    );
    await source.start();
    await waitFor(() => ready.length === 2);
    const polled = fault.stats.listings;
    while (fault.stats.listings < polled + 6) await source.tick();
    expect(ready.map((f) => f.name).sort()).toEqual(['inside.pdf', 'top.pdf']);
    const said = capture.lines().filter((l) => l.msg === 'sub-folder cannot be listed');
    expect(said).toEqual([expect.objectContaining({ file: 'broken', code: 'DOCEX_SFTP_IO' })]);
    expect(capture.lines().filter((l) => l.msg === 'sftp poll failed')).toEqual([]);
    // Listed again once the server lists it: its file is taken.
    fault.knobs.failListing.clear();
    await waitFor(async () => {
      await source.tick();
      return ready.length === 3;
    });
    expect(ready[2]?.name).toBe('stuck.pdf');
  });

  it('claims a sub-folder file in place (claim: journal) into the spool under its sub-path, and removes it from there once final', async () => {
    mkdirSync(path.join(remote, 'acme'));
    const remoteFile = path.join(remote, 'acme', 'x.pdf');
    writeFileSync(remoteFile, 'in place');
    const ready: SpoolFile[] = [];
    const source = makeSource(
      {
        accept: acceptInto(ready),
      },
      undefined,
      { claim: 'journal', recursive: { depth: 1 } },
    );
    await source.start();
    await waitFor(() => ready.length === 1);
    expect(ready[0]).toMatchObject({
      name: 'x.pdf',
      claimedPath: path.join(spool, '.processing', 'acme', 'x.pdf'),
    });
    expect(ready[0]?.originalPath.endsWith(`${remote}/acme/x.pdf`)).toBe(true);
    expect(existsSync(remoteFile)).toBe(true);
    const st = statSync(remoteFile);
    const item = {
      kind: 'file',
      folder: 'remote',
      fileName: 'x.pdf',
      sourcePath: ready[0]?.originalPath,
      state: 'done',
      size: st.size,
      mtimeMs: st.mtimeMs,
    } as JournalItem;
    await source.finished(item);
    expect(existsSync(remoteFile)).toBe(false);
    expect(listDir(path.join(remote, 'acme'))).toEqual([]);
  });
});
