/**
 * A recursive SFTP folder's claim sub-folders against a real OpenSSH sshd: the sub-folders of the
 * remote `.processing/` and of the local spool's `.processing/` go once their last file has left
 * (archived, deleted, refused), each emptied parent with them, and those a crash left empty go at
 * the next start; the drop tree's own sub-folders, the archive and error folders stay.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import type { Logger } from '../../../src/core/logger.js';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { openSftpServer } from '../../../src/sftp/server.js';
import type { SftpServer } from '../../../src/sftp/types.js';
import { FILE_IN_THE_WAY } from '../../../src/sources/local/claim.js';
import { SftpSource } from '../../../src/sources/sftp/source.js';
import { captureLogger } from '../../api/support/log-capture.js';
import { makePdf } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { sshdEndpoint } from './support/endpoint.js';
import { FOLDER, type SftpAgentEnv, sshdAgentSuite } from './support/sftp-agent.js';
import { describeSshd, startSshd, type TestSshd } from './support/sshd.js';

const routes = [
  { match: 'acme/invoices/*.pdf', workflowId: SEED.workflows.pdfPrint },
  { match: 'acme/*.pdf', workflowId: SEED.workflows.pdfEmail },
];

const spoolProcessing = (env: SftpAgentEnv) =>
  path.join(env.stateDir, 'sftp', FOLDER, 'spool', '.processing');
/** A folder's entries but the agent's hidden ones. */
const visible = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => !n.startsWith('.'))
        .sort()
    : [];

describeSshd('a recursive sftp folder: emptied claim sub-folders', () => {
  const suite = sshdAgentSuite();

  it.each(['archive', 'delete'] as const)(
    'removes the sub-folders of the remote and spool .processing once their files left (afterSuccess: %s, and refused), never the drop tree’s own',
    async (afterSuccess) => {
      const { env } = suite;
      env.drop('acme/invoices/deep/x.pdf', await makePdf('no route: refused'));
      env.drop('acme/invoices/two.pdf', await makePdf('routed at depth 2'));
      env.drop('acme/one.pdf', await makePdf('routed at depth 1'));
      const agent = await env.start(env.config({ afterSuccess }, { recursive: { depth: 3 }, routes }));
      await waitFor(async () => {
        const { done, rejected } = (await agent.journal.stats()).files;
        return done === 2 && rejected === 1;
      }, 30_000);
      // The remote finish follows the journal's final state.
      await waitFor(() => env.refused().length === 3, 30_000);
      await waitFor(() => visible(path.join(env.remote, '.processing')).length === 0, 30_000);
      await waitFor(() => visible(spoolProcessing(env)).length === 0, 30_000);
      await env.h.stopAgents();

      // The ERP's sub-folders stay, emptied; the archive and error folders keep the sub-paths.
      expect(visible(env.remote)).toEqual(['acme']);
      expect(env.remoteFiles('acme/invoices/deep')).toEqual([]);
      expect(existsSync(path.join(env.remote, 'acme', 'invoices', 'deep'))).toBe(true);
      expect(env.refused()).toEqual(
        ['x.pdf', 'x.pdf.error.json', 'x.pdf.error.txt'].map((n) => path.join('acme', 'invoices', 'deep', n)),
      );
      if (afterSuccess === 'archive') expect(env.archived()).toHaveLength(2);
    },
  );

  it('removes the empty sub-folders a crash left in the remote and spool .processing at the next start', async () => {
    const { env } = suite;
    mkdirSync(path.join(env.remote, '.processing', 'acme', 'invoices'), { recursive: true });
    mkdirSync(path.join(env.remote, '.processing', 'beta'), { recursive: true });
    mkdirSync(path.join(spoolProcessing(env), 'acme', 'invoices'), { recursive: true });
    env.drop('acme/one.pdf', await makePdf('dropped after the crash'));
    await env.start(env.config({}, { recursive: true, routes }));
    await waitFor(() => env.archived().length === 1, 30_000);
    await waitFor(() => visible(path.join(env.remote, '.processing')).length === 0, 30_000);
    await env.h.stopAgents();
    expect(visible(spoolProcessing(env))).toEqual([]);
    expect(visible(env.remote)).toEqual(['acme']);
  });
});

/** A recursive (depth 1) source on `remote`, its spool beside it; the pipeline takes every copy and keeps it. */
function makeSource(sshd: TestSshd, remote: string, server: SftpServer, log: Logger): SftpSource {
  return new SftpSource({
    folder: {
      name: 'remote',
      url: `sftp://${sshd.username}@127.0.0.1:${sshd.port}${remote}`,
      remotePath: remote,
      include: ['*'],
      exclude: [],
      stability: { kind: 'settle', settleMs: 0 },
      claim: 'rename',
      afterSuccess: 'archive',
      remoteArchiveDir: path.join(remote, '.archive'),
      remoteErrorDir: path.join(remote, '.error'),
      spoolDir: path.join(path.dirname(remote), 'spool'),
      pollIntervalMs: 0,
      recursive: { depth: 1 },
      order: 'name',
    },
    server,
    journal: { byPath: async () => [], holds: () => true },
    clock: new ManualClock(Date.now()),
    log,
    accept: () => true,
    errorFiles: () => [],
  });
}

describeSshd(
  'a recursive sftp folder: claims meeting a sub-folder being removed, or a file of its name',
  () => {
    let sshd: TestSshd;
    let root: string;
    const cleanups: Array<() => Promise<void>> = [];
    beforeAll(async () => {
      sshd = await startSshd();
    });
    beforeEach(() => {
      root = mkdtempSync(path.join(sshd.files, 'claims-'));
    });
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
      rmSync(root, { recursive: true, force: true });
    });
    afterAll(async () => {
      await sshd?.stop();
    });

    function open(remote: string, wrap: (inner: SftpServer) => SftpServer = (inner) => inner) {
      const inner = openSftpServer(sshdEndpoint(sshd), { log: captureLogger().log });
      const capture = captureLogger();
      const source = makeSource(sshd, remote, wrap(inner), capture.log);
      cleanups.push(async () => {
        await source.stop();
        await inner.close();
      });
      return { source, capture };
    }

    it('makes the sub-folder again when it went between its mkdir and the rename, and claims the file', async () => {
      const remote = path.join(root, 'outbox');
      mkdirSync(path.join(remote, 'acme'), { recursive: true });
      writeFileSync(path.join(remote, 'acme', 'x.pdf'), 'claimed while its folder goes');
      const claimDir = path.join(remote, '.processing', 'acme');
      let removed = 0;
      // The first mkdir of the claim folder is undone at once, as a file of it that finished would.
      const { source, capture } = open(remote, (inner) =>
        Object.assign(Object.create(inner) as SftpServer, {
          mkdirp: async (dir: string) => {
            await inner.mkdirp(dir);
            if (dir === claimDir && removed++ === 0)
              expect(await inner.removeEmptyFolder(dir)).toBe('removed');
          },
        }),
      );
      await source.start();
      await waitFor(async () => {
        await source.tick();
        return existsSync(path.join(claimDir, 'x.pdf'));
      }, 10_000);
      expect(removed).toBe(2);
      expect(readdirSync(path.join(remote, 'acme'))).toEqual([]);
      // Neither taken for another claimer's nor for a server that refuses renames.
      expect(capture.lines().map((l) => l.msg)).not.toContain('file taken by another claimer');
      expect(capture.lines().filter((l) => l.level !== 'info')).toEqual([]);
    });

    it('leaves a file whose sub-folder’s name a claimed file holds in place, says so once, and claims it once that file has moved on', async () => {
      const remote = path.join(root, 'outbox');
      mkdirSync(remote);
      writeFileSync(path.join(remote, 'acme'), 'a file named like a company folder');
      const { source, capture } = open(remote);
      await source.start();
      const claimedAcme = path.join(remote, '.processing', 'acme');
      const spoolAcme = path.join(root, 'spool', '.processing', 'acme');
      await waitFor(async () => {
        await source.tick();
        return existsSync(spoolAcme);
      }, 10_000);
      // `acme` is in flight; the ERP now makes the folder `acme/` (a server backed by object storage
      // may even list both at once).
      mkdirSync(path.join(remote, 'acme'));
      writeFileSync(path.join(remote, 'acme', 'x.pdf'), 'waits for acme to move on');
      const inTheWay = () => capture.lines().filter((l) => l.msg === FILE_IN_THE_WAY);
      await waitFor(async () => {
        await source.tick();
        return inTheWay().length > 0;
      }, 10_000);
      for (let i = 0; i < 3; i++) await source.tick();
      expect(inTheWay()).toEqual([expect.objectContaining({ level: 'warn', file: 'acme/x.pdf' })]);
      expect(capture.lines().filter((l) => l.level === 'error')).toEqual([]);
      expect(readdirSync(path.join(remote, 'acme'))).toEqual(['x.pdf']);

      // `acme` finished (its remote file and spool copy gone): `acme/x.pdf` proceeds.
      rmSync(claimedAcme);
      rmSync(spoolAcme);
      await waitFor(async () => {
        await source.tick();
        return existsSync(path.join(root, 'spool', '.processing', 'acme', 'x.pdf'));
      }, 10_000);
      expect(readdirSync(path.join(claimedAcme))).toEqual(['x.pdf']);
      expect(inTheWay()).toHaveLength(1);
      expect(capture.lines().filter((l) => l.level === 'error')).toEqual([]);
    });
  },
);
