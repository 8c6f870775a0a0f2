/**
 * A remote name that is not UTF-8 (a Latin-1 ERP), against a real OpenSSH sshd: ssh2 lists it with
 * U+FFFD and no request can reach it. It must not be retried silently forever: it stays in place,
 * is reported once, and reason files in the remote error folder say how to fix it.
 */
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { makePdf } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { sshdAgentSuite } from './support/sftp-agent.js';
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
