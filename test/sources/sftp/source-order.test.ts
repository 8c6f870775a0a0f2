/**
 * The order an SFTP folder claims its complete files in (order, maxFilesPerScan), against a real
 * SSH server (ssh2's server over a temp folder). Claims are the renames into the remote
 * `.processing/`, recorded as they are made; remote times are set with utimes.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { openSftpServer } from '../../../src/sftp/server.js';
import type { SftpServer } from '../../../src/sftp/types.js';
import { type SftpFolderSettings, SftpSource } from '../../../src/sources/sftp/source.js';
import { captureLogger } from '../../api/support/log-capture.js';
import { faultServerEndpoint } from './support/endpoint.js';
import { type FaultServer, startFaultServer } from './support/fault-server.js';

let root: string;
let fault: FaultServer;
let remote: string;
const open: Array<{ source: SftpSource; server: SftpServer }> = [];

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'docex-sftp-order-'));
  remote = path.join(root, 'outbox');
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

/** A source whose claims (renames out of the drop folder) are recorded by name, in order. */
function makeSource(settings: Pick<SftpFolderSettings, 'order'> & Partial<SftpFolderSettings>) {
  const inner = openSftpServer(faultServerEndpoint(fault), { log: captureLogger().log });
  const claimed: string[] = [];
  const server = Object.assign(Object.create(inner) as SftpServer, {
    rename: async (from: string, to: string) => {
      await inner.rename(from, to);
      if (path.dirname(from) === remote) claimed.push(path.basename(from));
    },
  });
  const source = new SftpSource({
    folder: {
      name: 'remote',
      url: `sftp://${fault.username}@127.0.0.1:${fault.port}${remote}`,
      remotePath: remote,
      include: ['*'],
      exclude: [],
      stability: { kind: 'rename-in' },
      claim: 'rename',
      afterSuccess: 'archive',
      remoteArchiveDir: path.join(remote, '.archive'),
      remoteErrorDir: path.join(remote, '.error'),
      spoolDir: path.join(root, 'spool'),
      pollIntervalMs: 0,
      ...settings,
    },
    server,
    journal: { byPath: async () => [], holds: () => true },
    clock: new ManualClock(Date.now()),
    log: captureLogger().log,
    accept: () => true,
    errorFiles: () => [],
  });
  open.push({ source, server: inner });
  return { source, claimed };
}

const BASE = Date.parse('2026-11-02T08:00:00Z') / 1000;

/** Name order is the reverse of time order: the oldest is the last by name. */
function dropBackwards(): void {
  for (const [name, minutes] of Object.entries({
    'a.pdf': 50,
    'b.pdf': 40,
    'c.pdf': 30,
    'd.pdf': 20,
    'e.pdf': 10,
  })) {
    const p = path.join(remote, name);
    writeFileSync(p, name);
    utimesSync(p, BASE + minutes * 60, BASE + minutes * 60);
  }
}

describe('sftp source order', () => {
  it('mtime with maxFilesPerScan 2: five files are claimed two per poll, oldest first', async () => {
    dropBackwards();
    const { source, claimed } = makeSource({ order: 'mtime', maxFilesPerScan: 2 });
    await source.start();
    await source.tick();
    expect(claimed).toEqual(['e.pdf', 'd.pdf']);
    await source.tick();
    expect(claimed).toEqual(['e.pdf', 'd.pdf', 'c.pdf', 'b.pdf']);
    await source.tick();
    expect(claimed).toEqual(['e.pdf', 'd.pdf', 'c.pdf', 'b.pdf', 'a.pdf']);
  });

  it('name: claims by file name whatever the remote times', async () => {
    dropBackwards();
    const { source, claimed } = makeSource({ order: 'name' });
    await source.start();
    await source.tick();
    expect(claimed).toEqual(['a.pdf', 'b.pdf', 'c.pdf', 'd.pdf', 'e.pdf']);
  });
});
