import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/cli/demo.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';

describe('npm start demo', () => {
  let dir: string;
  let sandbox: RunningSandbox;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docex-demo-'));
    sandbox = await startSandbox({ stateDir: path.join(dir, 'sandbox'), speed: 1000, log: silentLogger() });
  });
  afterAll(async () => {
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('submits every sample, follows it to a final state and saves its proofs as PDFs', async () => {
    const outDir = path.join(dir, 'proofs');
    const results = await runDemo({
      sandbox,
      samplesDir: 'samples',
      outDir,
      log: silentLogger(),
      pollIntervalMs: 50,
    });

    expect(results.map((r) => r.sample)).toEqual(
      expect.arrayContaining([
        'pdf-email/invoices-2026-batch.zip',
        'ubl/invoice-base-example.xml',
        'payload-word/email.json',
      ]),
    );
    expect(results).toHaveLength(14);
    for (const result of results) {
      expect(result.events.length, result.sample).toBeGreaterThan(0);
      for (const event of result.events) {
        expect(['SUCCESS', 'FAILURE', 'REJECTED']).toContain(event.businessStatus);
        expect(event.proofs.length).toBeGreaterThan(0);
        for (const proof of event.proofs) expect(readFileSync(proof).subarray(0, 5).toString()).toBe('%PDF-');
      }
    }
    // A ZIP of three PDFs becomes three sending events (decisions, Jobs).
    expect(results.find((r) => r.sample === 'pdf-email/invoices-2026-batch.zip')?.events).toHaveLength(3);
  });
});
