/**
 * End to end against a real OpenSSH sshd (key login, known_hosts pinning): 20 PDFs dropped on the
 * server, the agent restarted while they are in flight; every file becomes exactly one job and ends
 * in the remote archive exactly once.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { makePdf, md5 } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { sshdAgentSuite } from './support/sftp-agent.js';
import { describeSshd } from './support/sshd.js';

describeSshd('sftp folder source against a real sshd', () => {
  const suite = sshdAgentSuite();

  it('takes 20 remote PDFs exactly once across a restart in the middle, and archives each remotely', async () => {
    const { env, sshd } = suite;
    const names = Array.from({ length: 20 }, (_, i) => `invoice-${String(i + 1).padStart(2, '0')}.pdf`);
    const pdfs = new Map<string, Buffer>();
    for (const name of names) {
      const pdf = await makePdf(`remote ${name}`);
      pdfs.set(name, pdf);
      env.drop(name, pdf);
    }
    const config = env.config({}, { concurrency: 2 });
    const first = await env.start(config);
    await waitFor(async () => (await first.journal.stats()).files.done >= 3, 30_000);
    await env.h.stopAgents();
    // Stopped in the middle: some files archived, the rest still on the server or in flight.
    expect(env.archived().length).toBeLessThan(20);

    const second = await env.start(config);
    const day = new Date(env.h.clock.now()).toISOString().slice(0, 10);
    await waitFor(() => env.archived().length === 20, 60_000);
    await waitFor(async () => (await second.journal.stats()).files.done === 20);

    expect(env.archived()).toEqual(names.map((n) => path.join(day, n)));
    expect(env.remoteFiles()).toEqual([]);
    expect(env.remoteFiles('.processing')).toEqual([]);
    expect(env.refused()).toEqual([]);
    expect((await second.journal.stats()).files.rejected).toBe(0);
    const jobs = await env.h.jobs();
    for (const name of names) {
      const mine = jobs.filter((j) => j.filename === name);
      expect(mine, name).toHaveLength(1);
      expect(mine[0]?.uploadedMd5, name).toBe(md5(pdfs.get(name)!));
    }
    expect(jobs).toHaveLength(20);
    // Nothing left in the local spool; the journal names each file by where it was dropped.
    expect(readdirSync(path.join(env.stateDir, 'sftp', 'remote', 'spool', '.processing'))).toEqual([]);
    const sources = (await second.journal.recent(40)).map((i) => i.sourcePath);
    expect(sources).toContain(`sftp://${sshd.username}@127.0.0.1:${sshd.port}${env.remote}/invoice-01.pdf`);
  });
});
