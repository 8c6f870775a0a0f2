/**
 * Several agents polling one SFTP folder (a shared journal), against a real SSH server (ssh2's
 * server over temp folders): each claims into a claim folder of its own in `.processing/`, so each
 * file is taken by one of them; the files in the claim folder of an agent that is gone, and files
 * claimed straight into `.processing/` before the journal was shared, are adopted; a live agent's
 * folder is left alone; a file left to another agent stops counting as in flight.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { JournalItem } from '../../../src/journal/index.js';
import { openSftpServer } from '../../../src/sftp/server.js';
import type { SftpServer } from '../../../src/sftp/types.js';
import { claimFolderOf, isClaimFolder } from '../../../src/sources/sftp/claim-folders.js';
import { SftpSource, type SharedClaims, type SpoolFile } from '../../../src/sources/sftp/source.js';
import { captureLogger } from '../../api/support/log-capture.js';
import { waitFor } from '../../support/wait-for.js';
import { faultServerEndpoint } from './support/endpoint.js';
import { type FaultServer, startFaultServer } from './support/fault-server.js';

let root: string;
let fault: FaultServer;
let remote: string;
const open: Array<{ source: SftpSource; server: SftpServer }> = [];

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'docex-sftp-shared-'));
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

const A = claimFolderOf('host-a:/var/lib/docex');
const B = claimFolderOf('host-b:/var/lib/docex');
const GONE = claimFolderOf('host-c:/var/lib/docex');

function agentSource(
  own: string,
  ready: SpoolFile[],
  abandoned: (name: string) => boolean = () => false,
  recursive?: { depth: number },
): SftpSource {
  const server = openSftpServer(faultServerEndpoint(fault), { log: captureLogger().log });
  const shared: SharedClaims = { own, isClaimFolder, abandoned: async (name) => abandoned(name) };
  const source = new SftpSource({
    folder: {
      name: 'remote',
      url: `sftp://${fault.username}@127.0.0.1:${fault.port}${remote}`,
      remotePath: remote,
      include: ['*.pdf'],
      exclude: [],
      stability: { kind: 'rename-in' },
      order: 'mtime',
      claim: 'rename',
      afterSuccess: 'archive',
      remoteArchiveDir: path.join(remote, '.archive'),
      remoteErrorDir: path.join(remote, '.error'),
      spoolDir: path.join(root, `spool-${own}`),
      pollIntervalMs: 0,
      recursive,
    },
    server,
    journal: { byPath: async () => [], holds: () => true },
    shared,
    clock: new ManualClock(Date.now()),
    log: captureLogger().log,
    accept: (file) => {
      ready.push(file);
      return true;
    },
    errorFiles: () => [],
  });
  open.push({ source, server });
  return source;
}

const listDir = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : []);
const claimed = (folder: string) => listDir(path.join(remote, '.processing', folder));

describe('an SFTP folder polled by several agents', () => {
  it('hands each file to one agent only, each claiming into its own folder', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `f${i}.pdf`);
    for (const name of names) writeFileSync(path.join(remote, name), `pdf ${name}`);
    const readyA: SpoolFile[] = [];
    const readyB: SpoolFile[] = [];
    const a = agentSource(A, readyA);
    const b = agentSource(B, readyB);
    await Promise.all([a.start(), b.start()]);
    for (let round = 0; round < 5 && readyA.length + readyB.length < names.length; round++) {
      await Promise.all([a.tick(), b.tick()]);
      await waitFor(() => claimed(A).length + claimed(B).length === readyA.length + readyB.length);
    }
    await waitFor(() => readyA.length + readyB.length === names.length);
    const taken = [...readyA, ...readyB].map((f) => f.name).sort();
    expect(taken).toEqual([...names].sort());
    expect(new Set(taken).size).toBe(names.length);
    expect(claimed(A)).toEqual(readyA.map((f) => f.name).sort());
    expect(claimed(B)).toEqual(readyB.map((f) => f.name).sort());
    expect(listDir(remote).filter((n) => n.endsWith('.pdf'))).toEqual([]);
  });

  it('adopts the files of a gone agent and the loose files of .processing/, and leaves a live agent’s alone', async () => {
    const processing = path.join(remote, '.processing');
    for (const folder of [GONE, B]) mkdirSync(path.join(processing, folder), { recursive: true });
    writeFileSync(path.join(processing, GONE, 'orphan.pdf'), 'claimed by a dead agent');
    writeFileSync(path.join(processing, 'loose.pdf'), 'claimed before the journal was shared');
    writeFileSync(path.join(processing, B, 'busy.pdf'), 'claimed by a live agent');
    const ready: SpoolFile[] = [];
    const a = agentSource(A, ready, (name) => name === GONE);
    await a.start();
    await a.tick();
    await waitFor(() => ready.length === 2);
    expect(ready.map((f) => f.name).sort()).toEqual(['loose.pdf', 'orphan.pdf']);
    expect(claimed(A)).toEqual(['loose.pdf', 'orphan.pdf']);
    expect(claimed(GONE)).toEqual([]);
    expect(claimed(B)).toEqual(['busy.pdf']);
  });

  it('keeps the sub-paths of a recursive folder: its claims, and the files it adopts', async () => {
    const processing = path.join(remote, '.processing');
    mkdirSync(path.join(processing, GONE, 'acme', 'invoices'), { recursive: true });
    writeFileSync(path.join(processing, GONE, 'acme', 'invoices', 'orphan.pdf'), 'claimed by a dead agent');
    mkdirSync(path.join(processing, 'north'));
    writeFileSync(path.join(processing, 'north', 'loose.pdf'), 'claimed before the journal was shared');
    mkdirSync(path.join(remote, 'beta'));
    writeFileSync(path.join(remote, 'beta', 'new.pdf'), 'dropped in a sub-folder');
    const ready: SpoolFile[] = [];
    const a = agentSource(A, ready, (name) => name === GONE, { depth: 2 });
    await a.start();
    await a.tick();
    await waitFor(() => ready.length === 3);
    const url = `sftp://${fault.username}@127.0.0.1:${fault.port}${remote}`;
    expect(ready.map((f) => f.originalPath).sort()).toEqual(
      ['acme/invoices/orphan.pdf', 'beta/new.pdf', 'north/loose.pdf'].map((p) => `${url}/${p}`),
    );
    expect(listDir(path.join(processing, A, 'acme', 'invoices'))).toEqual(['orphan.pdf']);
    expect(listDir(path.join(processing, A, 'north'))).toEqual(['loose.pdf']);
    expect(listDir(path.join(processing, A, 'beta'))).toEqual(['new.pdf']);
    // The sub-folders the adopted files left go; the gone agent's claim folder stays for its return.
    expect(listDir(path.join(processing, GONE))).toEqual([]);
    expect(listDir(processing)).toEqual([A, GONE].sort());
  });

  it('adopts the sub-folder files of a gone recursive agent when it does not recurse itself, sub-paths kept', async () => {
    const processing = path.join(remote, '.processing');
    mkdirSync(path.join(processing, GONE, 'acme', 'invoices'), { recursive: true });
    writeFileSync(path.join(processing, GONE, 'acme', 'invoices', 'orphan.pdf'), 'claimed by a dead agent');
    mkdirSync(path.join(processing, 'north'));
    writeFileSync(path.join(processing, 'north', 'loose.pdf'), 'claimed before the journal was shared');
    const ready: SpoolFile[] = [];
    const a = agentSource(A, ready, (name) => name === GONE);
    await a.start();
    await a.tick();
    await waitFor(() => ready.length === 2);
    const url = `sftp://${fault.username}@127.0.0.1:${fault.port}${remote}`;
    expect(ready.map((f) => f.originalPath).sort()).toEqual(
      ['acme/invoices/orphan.pdf', 'north/loose.pdf'].map((p) => `${url}/${p}`),
    );
    expect(listDir(path.join(processing, A, 'acme', 'invoices'))).toEqual(['orphan.pdf']);
    expect(listDir(path.join(processing, A, 'north'))).toEqual(['loose.pdf']);
    expect(listDir(path.join(processing, GONE, 'acme', 'invoices'))).toEqual([]);
  });

  it('forgets a file left to another agent: taken again once it is back in its claim folder', async () => {
    writeFileSync(path.join(remote, 'x.pdf'), 'pdf x');
    const ready: SpoolFile[] = [];
    const a = agentSource(A, ready);
    await a.start();
    await a.tick();
    await waitFor(() => ready.length === 1);
    const spoolCopy = ready[0]!.claimedPath;
    const item = {
      kind: 'file',
      folder: 'remote',
      sourcePath: ready[0]!.originalPath,
    } as JournalItem;
    await a.left(item);
    expect(existsSync(spoolCopy)).toBe(false);
    // Still in this agent's claim folder (adopted back, say): the next poll takes it again.
    await a.tick();
    await waitFor(() => ready.length === 2);
    expect(ready.map((f) => f.name)).toEqual(['x.pdf', 'x.pdf']);
  });
});
