/**
 * A recursive SFTP folder against a real OpenSSH sshd: files in remote sub-folders are claimed
 * into the same sub-path of the remote `.processing/`, routed by their path relative to the drop
 * folder, and archived or refused under that sub-path on the server (and in the local copies); a
 * file deeper than the depth is left where it is; a sub-folder made while the agent runs is listed
 * at a later poll; a file a crash left in a sub-folder of `.processing/` is taken exactly once at
 * the next start; a sub-folder whose name is hostile, or a link, is never entered.
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { listFiles, makePdf, md5 } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { FOLDER, type SftpAgentEnv, sshdAgentSuite } from './support/sftp-agent.js';
import { describeSshd } from './support/sshd.js';

const routes = [
  { match: 'acme/invoices/*.pdf', workflowId: SEED.workflows.pdfPrint },
  { match: '*/*.pdf', workflowId: SEED.workflows.pdfEmail },
  { match: '*.pdf', workflowId: SEED.workflows.pdfEmail },
];

const dayOf = (env: SftpAgentEnv) => new Date(env.h.clock.now()).toISOString().slice(0, 10);
const spoolProcessing = (env: SftpAgentEnv) =>
  path.join(env.stateDir, 'sftp', FOLDER, 'spool', '.processing');
const jobsNamed = async (env: SftpAgentEnv, name: string) =>
  (await env.h.jobs()).filter((j) => j.filename === name);

describeSshd('a recursive sftp folder: depth, routes, archive and error sub-paths', () => {
  const suite = sshdAgentSuite();

  it('claims files at depth 1 and 2, routes them by relative path, archives them under the same sub-path, and leaves a deeper file alone', async () => {
    const { env, sshd } = suite;
    const two = await makePdf('acme invoice at depth 2');
    env.drop('top.pdf', await makePdf('at the top'));
    env.drop('acme/one.pdf', await makePdf('acme at depth 1'));
    env.drop('acme/invoices/two.pdf', two);
    env.drop('acme/invoices/deep/three.pdf', await makePdf('too deep'));
    env.drop('beta/misc/stray.pdf', await makePdf('no route takes it'));
    const agent = await env.start(env.config({}, { recursive: { depth: 2 }, routes }));
    await waitFor(async () => {
      const { done, rejected } = (await agent.journal.stats()).files;
      return done === 3 && rejected === 1;
    }, 30_000);
    await waitFor(() => env.refused().length === 3);
    // The journal keeps the file's own name and where it was dropped on the server.
    const url = `sftp://${sshd.username}@127.0.0.1:${sshd.port}${env.remote}`;
    const [item] = await agent.journal.byPath(`${url}/acme/invoices/two.pdf`);
    await env.h.stopAgents();

    const day = dayOf(env);
    expect(env.archived()).toEqual(
      [`${day}/top.pdf`, `acme/${day}/one.pdf`, `acme/invoices/${day}/two.pdf`].map((p) =>
        path.join(...p.split('/')),
      ),
    );
    expect(env.refused()).toEqual(
      ['stray.pdf', 'stray.pdf.error.json', 'stray.pdf.error.txt'].map((n) => path.join('beta', 'misc', n)),
    );
    const refusal = readFileSync(
      path.join(env.remote, '.error', 'beta', 'misc', 'stray.pdf.error.json'),
      'utf8',
    );
    expect(JSON.parse(refusal)).toMatchObject({ code: 'DOCEX_INPUT_NO_ROUTE' });
    // Deeper than the depth: never claimed, still where it was dropped.
    expect(env.remoteFiles('acme/invoices/deep')).toEqual(['three.pdf']);
    expect(await jobsNamed(env, 'three.pdf')).toEqual([]);
    expect(listFiles(path.join(env.remote, '.processing'))).toEqual([]);
    expect(listFiles(spoolProcessing(env))).toEqual([]);

    expect(await jobsNamed(env, 'two.pdf')).toEqual([
      expect.objectContaining({ workflowId: SEED.workflows.pdfPrint, uploadedMd5: md5(two) }),
    ]);
    expect(await jobsNamed(env, 'one.pdf')).toEqual([
      expect.objectContaining({ workflowId: SEED.workflows.pdfEmail }),
    ]);
    expect(await jobsNamed(env, 'top.pdf')).toHaveLength(1);
    expect(item).toMatchObject({ fileName: 'two.pdf', state: 'done' });
    // The local copies keep the sub-path too.
    expect(listFiles(path.join(env.stateDir, 'sftp', FOLDER, 'archive'))).toContain(
      path.join('acme', 'invoices', day, 'two.pdf'),
    );
    expect(listFiles(path.join(env.stateDir, 'sftp', FOLDER, 'error'))).toContain(
      path.join('beta', 'misc', 'stray.pdf'),
    );
  });
});

describeSshd('a recursive sftp folder: sub-folders made while it runs', () => {
  const suite = sshdAgentSuite();

  it('lists a sub-folder made after the start at a later poll and takes its files', async () => {
    const { env } = suite;
    env.drop('first.pdf', await makePdf('before the sub-folder'));
    const agent = await env.start(env.config({}, { recursive: true }));
    await waitFor(() => env.archived().some((f) => f.endsWith('first.pdf')), 30_000);

    mkdirSync(path.join(env.remote, 'late'));
    env.drop('late/again/later.pdf', await makePdf('in a sub-folder made while running'));
    await waitFor(async () => (await agent.journal.stats()).files.done === 2, 30_000);
    await waitFor(() => env.archived().length === 2);
    await env.h.stopAgents();
    expect(env.archived()).toEqual(
      [`${dayOf(env)}/first.pdf`, `late/again/${dayOf(env)}/later.pdf`].map((p) =>
        path.join(...p.split('/')),
      ),
    );
    expect(await jobsNamed(env, 'later.pdf')).toHaveLength(1);
  });
});

describeSshd('a recursive sftp folder: restart', () => {
  const suite = sshdAgentSuite();

  it('takes a file a crash left in a sub-folder of .processing exactly once, downloaded or not', async () => {
    const { env } = suite;
    // Claimed into `.processing/acme/invoices/`, then killed before the download.
    const claimed = path.join(env.remote, '.processing', 'acme', 'invoices');
    mkdirSync(claimed, { recursive: true });
    const a = await makePdf('claimed, never downloaded');
    writeFileSync(path.join(claimed, 'a.pdf'), a);
    // Claimed and downloaded into the spool (stamped with the remote mtime), killed before its record.
    const b = await makePdf('claimed and downloaded, never recorded');
    mkdirSync(path.join(env.remote, '.processing', 'north'), { recursive: true });
    const remoteB = path.join(env.remote, '.processing', 'north', 'b.pdf');
    writeFileSync(remoteB, b);
    const spoolB = path.join(spoolProcessing(env), 'north', 'b.pdf');
    mkdirSync(path.dirname(spoolB), { recursive: true });
    writeFileSync(spoolB, b);
    const { mtime } = statSync(remoteB);
    utimesSync(spoolB, mtime, mtime);

    const config = env.config({}, { recursive: { depth: 2 }, routes });
    const first = await env.start(config);
    await waitFor(async () => (await first.journal.stats()).files.done === 2, 30_000);
    await waitFor(() => env.archived().length === 2);
    await env.h.stopAgents();
    // Started again: nothing is taken twice (a file dropped now is archived after polls that
    // reconciled `.processing/` and listed the tree).
    const second = await env.start(config);
    env.drop('north/after.pdf', await makePdf('after the second start'));
    await waitFor(() => env.archived().length === 3, 30_000);
    const files = (await second.journal.stats()).files;
    await env.h.stopAgents();

    const day = dayOf(env);
    expect(env.archived()).toEqual(
      [`acme/invoices/${day}/a.pdf`, `north/${day}/after.pdf`, `north/${day}/b.pdf`].map((p) =>
        path.join(...p.split('/')),
      ),
    );
    expect(listFiles(path.join(env.remote, '.processing'))).toEqual([]);
    expect(listFiles(spoolProcessing(env))).toEqual([]);
    expect(await jobsNamed(env, 'a.pdf')).toEqual([
      expect.objectContaining({ workflowId: SEED.workflows.pdfPrint, uploadedMd5: md5(a) }),
    ]);
    expect(await jobsNamed(env, 'b.pdf')).toEqual([expect.objectContaining({ uploadedMd5: md5(b) })]);
    expect(files).toMatchObject({ done: 3, rejected: 0 });
  });

  it.each([
    ['recursion turned off', {}],
    ['the depth lowered', { recursive: { depth: 1 } }],
  ])(
    'finishes a file a crash left deeper in .processing than the folder now lists (%s)',
    async (_, folder) => {
      const { env } = suite;
      // Claimed at depth 2 by the agent before, killed before the download.
      const claimed = path.join(env.remote, '.processing', 'deep', 'er');
      mkdirSync(claimed, { recursive: true });
      const name = `left-${Object.keys(folder).length}.pdf`;
      const pdf = await makePdf(`left at depth 2 in .processing: ${name}`);
      writeFileSync(path.join(claimed, name), pdf);
      await env.start(env.config({}, folder));
      await waitFor(() => env.archived().some((f) => f.endsWith(name)), 30_000);
      await env.h.stopAgents();
      expect(env.archived()).toContain(path.join('deep', 'er', dayOf(env), name));
      expect(listFiles(path.join(env.remote, '.processing'))).toEqual([]);
      expect(await jobsNamed(env, name)).toEqual([expect.objectContaining({ uploadedMd5: md5(pdf) })]);
    },
  );

  it('takes files in sub-folders exactly once across a restart in the middle', async () => {
    const { env } = suite;
    const names = Array.from({ length: 12 }, (_, i) => `${['acme', 'beta', 'gamma'][i % 3]}/f-${i}.pdf`);
    for (const name of names) env.drop(name, await makePdf(`restart ${name}`));
    const config = env.config({}, { recursive: true, concurrency: 2 });
    const first = await env.start(config);
    await waitFor(async () => (await first.journal.stats()).files.done >= 3, 30_000);
    await env.h.stopAgents();

    const second = await env.start(config);
    await waitFor(async () => (await second.journal.stats()).files.done === names.length, 60_000);
    await waitFor(() => env.archived().filter((f) => f.includes('f-')).length === names.length);
    await env.h.stopAgents();
    for (const name of names) {
      const [sub, file] = name.split('/') as [string, string];
      expect(await jobsNamed(env, file), name).toHaveLength(1);
      expect(env.archived(), name).toContain(path.join(sub, dayOf(env), file));
    }
    expect(listFiles(path.join(env.remote, '.processing'))).toEqual([]);
  });
});

describeSshd('a recursive sftp folder: hostile sub-folders', () => {
  const suite = sshdAgentSuite();

  it('never enters a sub-folder whose name is not a valid file name, a reserved one or a link, says so once, and reports a file name that is not UTF-8 under its sub-path', async () => {
    const { env } = suite;
    const latin1 = Buffer.concat([Buffer.from(`${env.remote}/`), Buffer.from('café', 'latin1')]);
    mkdirSync(latin1);
    writeFileSync(Buffer.concat([latin1, Buffer.from('/in-latin1.pdf')]), await makePdf('latin-1 folder'));
    env.drop('ctl\u0001dir/in-control.pdf', await makePdf('control character folder'));
    env.drop('agent-0123456789abcdef/in-reserved.pdf', await makePdf('claim folder name'));
    const elsewhere = path.join(path.dirname(env.remote), 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    writeFileSync(path.join(elsewhere, 'outside.pdf'), await makePdf('behind a link'));
    symlinkSync(elsewhere, path.join(env.remote, 'linked'));
    env.drop('ok/fine.pdf', await makePdf('a plain sub-folder'));
    // A file whose own name is not UTF-8, in a sub-folder: its reason files keep the sub-path.
    writeFileSync(
      Buffer.concat([Buffer.from(`${env.remote}/ok/`), Buffer.from('né.pdf', 'latin1')]),
      await makePdf('latin-1 file name'),
    );

    const agent = await env.start(env.config({}, { recursive: true }));
    await waitFor(() => env.archived().some((f) => f.endsWith('fine.pdf')), 30_000);
    // A file dropped after that one is archived only after more polls have listed the tree.
    env.drop('ok/later.pdf', await makePdf('after more polls'));
    await waitFor(() => env.archived().some((f) => f.endsWith('later.pdf')), 30_000);
    await waitFor(() => env.refused().length === 2);
    const journalled = (await agent.journal.recent(10)).map((i) => i.fileName).sort();
    await env.h.stopAgents();

    expect(journalled).toEqual(['fine.pdf', 'later.pdf']);
    expect(readdirSync(latin1)).toEqual(['in-latin1.pdf']);
    expect(env.remoteFiles('ctl\u0001dir')).toEqual(['in-control.pdf']);
    expect(env.remoteFiles('agent-0123456789abcdef')).toEqual(['in-reserved.pdf']);
    expect(readdirSync(elsewhere)).toEqual(['outside.pdf']);
    expect(env.refused()).toEqual(
      ['n\uFFFD.pdf.error.json', 'n\uFFFD.pdf.error.txt'].map((n) => path.join('ok', n)),
    );
    expect(env.remoteFiles('ok')).toEqual(['n\uFFFD.pdf']);
    expect(env.h.logs.filter((l) => l.code === 'DOCEX_INPUT_BAD_NAME').map((l) => l.file)).toEqual([
      'ok/n\uFFFD.pdf',
    ]);
    const said = (msg: string) => env.h.logs.filter((l) => l.msg === msg).map((l) => l.file);
    expect(said('sub-folder name is not a valid file name: not entered').sort()).toEqual([
      'caf\uFFFD',
      'ctl\u0001dir',
    ]);
    expect(
      said("sub-folder named like an agent's claim folder (agent-<16 hex digits>): not entered"),
    ).toEqual(['agent-0123456789abcdef']);
  });
});
