/**
 * The return path of a recursive folder's file keeps its sub-path: its status file and delivery
 * proofs are written under the same sub-folders of the output folders as it was dropped in.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigReloader } from '../../src/agent/reload.js';
import { loadConfig } from '../../src/config/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makePdf, useHarness } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import {
  day,
  finalWithProofs,
  proofDir,
  proofsOf,
  pump,
  returnsConfig,
  statusDir,
} from './support/returns-harness.js';

let h: Harness;
useHarness({}, (made) => {
  h = made;
});

describe('following a job of a recursive folder', () => {
  it('writes the status file and the proofs under the sub-path the file was dropped at', async () => {
    const config = h.config([{ name: 'tree', workflowId: SEED.workflows.pdfEmail, recursive: true }], {
      returns: returnsConfig(h),
    });
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const claimedDay = day(h.clock.now());
    h.drop(
      'tree',
      'acme/invoices/inv-7.pdf',
      await makePdf('acme invoice', { recipient: { EMAIL_ADDRESS: 'ann@example.com' } }),
    );
    await waitFor(async () => (await agent.journal.stats()).files.done === 1);
    const status = await pump(h, () =>
      finalWithProofs(h, `acme/invoices/${claimedDay}/inv-7.pdf.status.json`),
    );
    // The status names the file by its path relative to the drop folder.
    expect(status).toMatchObject({ file: 'acme/invoices/inv-7.pdf', folder: 'tree', final: true });
    const proofs = proofsOf(status);
    expect(proofs.length).toBeGreaterThan(0);
    for (const proof of proofs) {
      expect(proof!.startsWith(`acme/invoices/${claimedDay}/inv-7/`), proof).toBe(true);
      expect(existsSync(path.join(proofDir(h), ...proof!.split('/')))).toBe(true);
    }
    await agent.stop();
  });

  it('keeps the sub-path of a file claimed before the folder moved, followed after the restart that moved it', async () => {
    const tree = { name: 'tree', workflowId: SEED.workflows.pdfEmail, recursive: true };
    // The first start only submits (no follower): its done job is read by the next start's.
    const before = await h.startAgent(
      h.config([tree], { returns: { ...returnsConfig(h), enabled: false } }),
      {
        returns: { maxSleepMs: 5 },
      },
    );
    const claimedDay = day(h.clock.now());
    h.drop('tree', 'acme/invoices/inv-8.pdf', await makePdf('acme invoice 8'));
    // Archived: its job is done (the journal's count holds the earlier test's file too).
    await waitFor(() =>
      existsSync(path.join(h.dir, 'archive', 'tree', 'acme', 'invoices', claimedDay, 'inv-8.pdf')),
    );
    await before.stop();

    const moved = path.join(h.dir, 'in', 'tree-moved');
    mkdirSync(moved, { recursive: true });
    const config = h.config([{ ...tree, source: { type: 'local', path: moved } }], {
      returns: returnsConfig(h),
    });
    const after = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    // Read from the dropped path against the moved folder, it was written under its name alone.
    const bare = `${claimedDay}/inv-8.pdf.status.json`;
    const status = await pump(
      h,
      () =>
        finalWithProofs(h, `acme/invoices/${claimedDay}/inv-8.pdf.status.json`) ?? finalWithProofs(h, bare),
    );
    expect(status).toMatchObject({ file: 'acme/invoices/inv-8.pdf', folder: 'tree' });
    for (const proof of proofsOf(status))
      expect(proof!.startsWith(`acme/invoices/${claimedDay}/inv-8/`)).toBe(true);
    expect(existsSync(path.join(statusDir(h), ...bare.split('/')))).toBe(false);
    await after.stop();
  });

  it('keeps the sub-path of a file dropped at the folder’s new path after a reload moved it', async () => {
    const configFile = path.join(h.dir, 'reload.yaml');
    const writeConfig = (drop: string) =>
      writeFileSync(
        configFile,
        stringify({
          sandbox: { enabled: true },
          stateDir: path.join(h.dir, 'state'),
          shutdownGraceMs: 2000,
          ops: { enabled: false },
          peppolInbox: { enabled: false },
          returns: returnsConfig(h),
          folders: [
            {
              name: 'tree',
              workflowId: SEED.workflows.pdfEmail,
              recursive: true,
              source: { type: 'local', path: drop },
              create: true,
              archiveDir: path.join(h.dir, 'archive', 'tree'),
              errorDir: path.join(h.dir, 'error', 'tree'),
              stability: { kind: 'rename-in' },
            },
          ],
        }),
      );
    writeConfig(path.join(h.dir, 'in', 'tree-before-reload'));
    const { config } = loadConfig(configFile);
    const agent = await h.startAgent(config, { returns: { maxSleepMs: 5 } });
    const reloader = new ConfigReloader({
      configFile,
      config,
      target: agent,
      fetchWorkflow: (id) => h.client.workflows.get(id),
      log: h.log,
    });
    const moved = path.join(h.dir, 'in', 'tree-after-reload');
    writeConfig(moved);
    expect(await reloader.reload()).toMatchObject({ applied: true, changed: ['tree'] });

    const claimedDay = day(h.clock.now());
    mkdirSync(path.join(moved, 'acme', 'invoices'), { recursive: true });
    const temp = path.join(moved, 'acme', 'invoices', 'inv-9.pdf.part');
    writeFileSync(temp, await makePdf('acme invoice 9'));
    renameSync(temp, path.join(moved, 'acme', 'invoices', 'inv-9.pdf'));
    // Read against the folders as configured at the follower's start, it was written under its name alone.
    const bare = `${claimedDay}/inv-9.pdf.status.json`;
    const status = await pump(
      h,
      () =>
        finalWithProofs(h, `acme/invoices/${claimedDay}/inv-9.pdf.status.json`) ?? finalWithProofs(h, bare),
    );
    expect(status).toMatchObject({ file: 'acme/invoices/inv-9.pdf', folder: 'tree' });
    expect(existsSync(path.join(statusDir(h), ...bare.split('/')))).toBe(false);
    await agent.stop();
  });
});
