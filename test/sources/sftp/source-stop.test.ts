/**
 * Stopping an SFTP folder (a reload removing it, or the agent stopping) while a file is in the
 * pipeline: intake stops at once, but the connection stays open until the file is final, so its
 * remote file still moves to the remote archive instead of staying stranded in `.processing/`.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/agent/agent.js';
import { clientWith, makePdf } from '../../pipeline/support/agent-harness.js';
import { waitFor } from '../../support/wait-for.js';
import { useFaultServerAgent } from './support/fault-agent.js';
import { FOLDER } from './support/sftp-agent.js';

const t = useFaultServerAgent('docex-sftp-stop-');

/** An agent whose uploads wait until `release()`; `uploading` turns true when one is held. */
async function agentWithHeldUpload(): Promise<{ agent: Agent; release(): void; uploading(): boolean }> {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let uploading = false;
  const agent = await t.env.h.startAgent(t.env.config(), {
    source: { sftpPollIntervalMs: 40 },
    client: clientWith(t.env.h.client, (real) => ({
      uploadFile: async (...args) => {
        uploading = true;
        await gate;
        return real.uploadFile(...args);
      },
    })),
  });
  return { agent, release: () => release(), uploading: () => uploading };
}

describe('stopping an sftp folder with a file in flight', () => {
  it('a reload removing the folder waits for the file, then archives it remotely before closing', async () => {
    const { agent, release, uploading } = await agentWithHeldUpload();
    t.env.drop('held.pdf', await makePdf('in flight during the removal'));
    await waitFor(uploading);
    expect(t.env.remoteFiles('.processing')).toEqual(['held.pdf']);

    let removed = false;
    const removal = agent.removeFolder(FOLDER).then(() => {
      removed = true;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(removed).toBe(false); // waits for the file in flight
    release();
    await removal;
    expect(t.env.archived()).toEqual([path.join(t.day(), 'held.pdf')]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
    expect((await agent.journal.recent(5)).find((i) => i.fileName === 'held.pdf')?.state).toBe('done');

    // Intake stopped: a file dropped after the removal stays on the server.
    t.env.drop('late.pdf', await makePdf('after the removal'));
    await new Promise((r) => setTimeout(r, 200));
    expect(t.env.remoteFiles()).toEqual(['late.pdf']);
  });

  it('the agent stopping lets the file finish in the grace time and archives it remotely', async () => {
    const { agent, release, uploading } = await agentWithHeldUpload();
    t.env.drop('held.pdf', await makePdf('in flight during the stop'));
    await waitFor(uploading);

    const stopping = agent.stop();
    setTimeout(release, 150);
    const report = await stopping;
    expect(report).toMatchObject({ drained: true, failures: [] });
    expect(t.env.archived()).toEqual([path.join(t.day(), 'held.pdf')]);
    expect(t.env.remoteFiles('.processing')).toEqual([]);
  });
});

describe('the pipeline answers whether it took a spool copy', () => {
  it('says no for an unknown folder and reports a claim that failed before the item existed', async () => {
    const agent = await t.env.start();
    const missing = path.join(t.env.stateDir, 'sftp', FOLDER, 'spool', '.processing', 'gone.pdf');
    const file = { name: 'gone.pdf', originalPath: `${t.env.remote}/gone.pdf`, claimedPath: missing };
    expect(agent.pipeline.accept('no-such-folder', file)).toBe(false);

    let lost: unknown;
    expect(
      agent.pipeline.accept(FOLDER, file, (err) => {
        lost = err;
      }),
    ).toBe(true);
    await waitFor(() => lost !== undefined);
    expect((lost as NodeJS.ErrnoException).code).toBe('ENOENT');
  });
});
