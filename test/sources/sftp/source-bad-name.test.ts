/**
 * A remote name that is not UTF-8 (a Latin-1 ERP), against a real OpenSSH sshd: ssh2 lists it with
 * U+FFFD and no request can reach it. It must not be retried silently forever: it stays in place,
 * is reported once, and reason files in the remote error folder say how to fix it. A name the
 * server can serve but the pipeline refuses (a format character such as U+200E) is claimed like
 * any other and ends in the remote error folder with its reason, under the sub-path it was dropped
 * at, never stuck in `.processing/`.
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { listFiles, makePdf } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { FOLDER, type SftpAgentEnv, sshdAgentSuite } from './support/sftp-agent.js';
import { describeSshd } from './support/sshd.js';

describeSshd('sftp folder source: a remote name that is not UTF-8', () => {
  const suite = sshdAgentSuite();

  it('leaves the file in place, says why once (log and remote reason files), and takes the others', async () => {
    const { env } = suite;
    const latin1 = Buffer.from('café.pdf', 'latin1');
    const temp = path.join(env.remote, '.latin1.uploading');
    writeFileSync(temp, await makePdf('latin-1 name'));
    renameSync(temp, Buffer.concat([Buffer.from(`${env.remote}/`), latin1]));
    env.drop('plain.pdf', await makePdf('plain name'));
    const agent = await env.start(env.config());
    await waitFor(() => env.archived().some((f) => f.endsWith('plain.pdf')), 30_000);
    await waitFor(() => env.refused().length === 2);
    // Ten more polls (50 ms apart) see the same name: still one report.
    await new Promise((r) => setTimeout(r, 500));
    const journalled = (await agent.journal.recent(10)).map((i) => i.fileName);
    await env.h.stopAgents();

    const shown = 'caf\uFFFD.pdf';
    expect(env.remoteFiles()).toEqual([shown]);
    expect(readdirSync(env.remote, { encoding: 'buffer' }).some((n) => n.equals(latin1))).toBe(true);
    const reports = env.h.logs.filter((l) => l.code === 'DOCEX_INPUT_BAD_NAME');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ level: 50, folder: 'remote', file: shown });
    expect(env.h.logs.filter((l) => l.msg === 'file taken by another claimer')).toEqual([]);
    expect(env.refused()).toEqual([`${shown}.error.json`, `${shown}.error.txt`]);
    const text = readFileSync(path.join(env.remote, '.error', `${shown}.error.txt`), 'utf8');
    expect(text).toContain('not valid UTF-8');
    expect(text).toContain('DOCEX_INPUT_BAD_NAME');
    expect(journalled).toEqual(['plain.pdf']);
    expect(await env.jobsFor(shown)).toBe(0);
  });

  it('takes a file whose UTF-8 name holds a real U+FFFD like any other', async () => {
    const { env } = suite;
    const name = 'real-\uFFFD.pdf';
    env.drop(name, await makePdf('genuine replacement character'));
    await env.start(env.config());
    await waitFor(() => env.archived().some((f) => f.endsWith(name)), 30_000);
    await env.h.stopAgents();
    expect(await env.jobsFor(name)).toBe(1);
    expect(env.refused().filter((f) => f.startsWith(name))).toEqual([]);
  });
});

describeSshd('sftp folder source: a file name the pipeline refuses', () => {
  const suite = sshdAgentSuite();
  /** U+200E (left-to-right mark): the server serves it, the pipeline refuses it (DOCEX_INPUT_BAD_NAME). */
  const LRM = '\u200E';
  const refusedUnder = (env: SftpAgentEnv, sub: string, name: string) =>
    env
      .refused()
      .filter((f) => path.dirname(f) === (sub === '' ? '.' : sub) && path.basename(f).startsWith(name));
  const dayOf = (env: SftpAgentEnv) => new Date(env.h.clock.now()).toISOString().slice(0, 10);
  const reasonOf = (env: SftpAgentEnv, relative: string) =>
    JSON.parse(readFileSync(path.join(env.remote, '.error', `${relative}.error.json`), 'utf8'));
  const localErrors = (env: SftpAgentEnv) => listFiles(path.join(env.stateDir, 'sftp', FOLDER, 'error'));
  const remoteProcessing = (env: SftpAgentEnv) => listFiles(path.join(env.remote, '.processing'));

  it('moves a flat folder’s file whose name holds a format character into the remote error folder with its reason, and keeps taking files', async () => {
    const { env } = suite;
    const name = `${LRM}flat.pdf`;
    env.drop(name, await makePdf('format character, flat'));
    await env.start(env.config());
    await waitFor(() => refusedUnder(env, '', name).length === 3, 30_000);
    // Its name no longer counts as in flight: a file dropped after it is taken too.
    env.drop('after-flat.pdf', await makePdf('after the refused one'));
    await waitFor(() => env.archived().some((f) => f.endsWith('after-flat.pdf')), 30_000);
    await env.h.stopAgents();

    expect(refusedUnder(env, '', name)).toEqual([name, `${name}.error.json`, `${name}.error.txt`]);
    expect(reasonOf(env, name)).toMatchObject({ code: 'DOCEX_INPUT_BAD_NAME' });
    expect(remoteProcessing(env)).toEqual([]);
    expect(localErrors(env)).toContain(name);
  });

  it('keeps the sub-path of such a file in a recursive folder: remote error folder and local error copy', async () => {
    const { env } = suite;
    const name = `${LRM}nested.pdf`;
    env.drop(`acme/${name}`, await makePdf('format character, in a sub-folder'));
    await env.start(env.config({}, { recursive: true }));
    await waitFor(() => refusedUnder(env, 'acme', name).length === 3, 30_000);
    await env.h.stopAgents();

    expect(refusedUnder(env, 'acme', name)).toEqual(
      [name, `${name}.error.json`, `${name}.error.txt`].map((n) => path.join('acme', n)),
    );
    expect(reasonOf(env, `acme/${name}`)).toMatchObject({ code: 'DOCEX_INPUT_BAD_NAME' });
    expect(refusedUnder(env, '', name)).toEqual([]);
    expect(remoteProcessing(env)).toEqual([]);
    expect(localErrors(env)).toContain(path.join('acme', name));
  });

  it('keeps the sub-path of a file whose own name holds a control character (U+0007) in a recursive folder: remote error folder with its reasons', async () => {
    const { env } = suite;
    const name = 'bell\u0007.pdf';
    env.drop(`acme/invoices/${name}`, await makePdf('control character, in a sub-folder'));
    await env.start(env.config({}, { recursive: true }));
    await waitFor(() => refusedUnder(env, path.join('acme', 'invoices'), name).length === 3, 30_000);
    // Its name no longer counts as in flight: a file dropped beside it after it is taken too.
    env.drop('acme/invoices/after-bell.pdf', await makePdf('after the refused one'));
    await waitFor(() => env.archived().some((f) => f.endsWith('after-bell.pdf')), 30_000);
    await env.h.stopAgents();

    expect(refusedUnder(env, path.join('acme', 'invoices'), name)).toEqual(
      [name, `${name}.error.json`, `${name}.error.txt`].map((n) => path.join('acme', 'invoices', n)),
    );
    expect(reasonOf(env, `acme/invoices/${name}`)).toMatchObject({ code: 'DOCEX_INPUT_BAD_NAME' });
    expect(env.remoteFiles('acme/invoices')).toEqual([]);
    expect(remoteProcessing(env)).toEqual([]);
    expect(localErrors(env)).toContain(path.join('acme', 'invoices', name));
  });

  it('takes a file whose own name is 255 bytes (the longest a Linux server holds: 256 cannot be dropped) in a recursive folder, archived under its sub-path', async () => {
    const { env } = suite;
    const name = `${'é'.repeat(125)}.pdf`;
    expect(Buffer.byteLength(name)).toBe(254);
    const longest = `l${name}`;
    // Written in place: the drop helper's temporary name would be longer than 255 bytes.
    mkdirSync(path.join(env.remote, 'acme'), { recursive: true });
    writeFileSync(path.join(env.remote, 'acme', longest), await makePdf('a 255-byte name'));
    const agent = await env.start(env.config({}, { recursive: true }));
    await waitFor(() => env.archived().some((f) => f.endsWith(longest)), 30_000);
    const files = (await agent.journal.stats()).files;
    await env.h.stopAgents();

    expect(env.archived()).toEqual([path.join('acme', dayOf(env), longest)]);
    expect(files).toMatchObject({ done: 1, rejected: 0 });
    expect(env.remoteFiles('acme')).toEqual([]);
    expect(remoteProcessing(env)).toEqual([]);
  });

  it('keeps the sub-path of such a file a crash left downloaded, never recorded, in a sub-folder of .processing', async () => {
    const { env } = suite;
    const name = `${LRM}crashed.pdf`;
    const pdf = await makePdf('format character, left by a crash');
    const remoteCopy = path.join(env.remote, '.processing', 'north', name);
    mkdirSync(path.dirname(remoteCopy), { recursive: true });
    writeFileSync(remoteCopy, pdf);
    // Downloaded into the spool (stamped with the remote mtime), killed before its record.
    const spoolCopy = path.join(env.stateDir, 'sftp', FOLDER, 'spool', '.processing', 'north', name);
    mkdirSync(path.dirname(spoolCopy), { recursive: true });
    writeFileSync(spoolCopy, pdf);
    const { mtime } = statSync(remoteCopy);
    utimesSync(spoolCopy, mtime, mtime);
    await env.start(env.config({}, { recursive: true }));
    await waitFor(() => refusedUnder(env, 'north', name).length === 3, 30_000);
    await env.h.stopAgents();

    expect(reasonOf(env, `north/${name}`)).toMatchObject({ code: 'DOCEX_INPUT_BAD_NAME' });
    expect(refusedUnder(env, '', name)).toEqual([]);
    expect(remoteProcessing(env)).toEqual([]);
    expect(localErrors(env)).toContain(path.join('north', name));
  });
});
