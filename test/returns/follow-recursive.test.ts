/**
 * The return path of a recursive folder's file keeps its sub-path: its status file and delivery
 * proofs are written under the same sub-folders of the output folders as it was dropped in.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { type Harness, makePdf, useHarness } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';
import { day, finalWithProofs, proofDir, proofsOf, pump, returnsConfig } from './support/returns-harness.js';

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
});
