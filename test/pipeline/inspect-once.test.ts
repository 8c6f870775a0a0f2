/**
 * A file's content is inspected once (issue 29): the verdict found at the claim is the one
 * validation gives, and the same bytes seen again under the same settings are not parsed again;
 * other settings (inspection limits, the folder's workflow or size limit, a hard link) are.
 */
import { createHash } from 'node:crypto';
import { linkSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Workflow } from '../../src/domain/wire.js';
import { inspect, intakeItem, validateItem } from '../../src/pipeline/intake.js';
import { Inspector } from '../../src/pipeline/isolate/inspector.js';
import type { HeldFile } from '../../src/pipeline/types.js';
import { VerdictCache } from '../../src/pipeline/verdicts.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { garbagePdf } from '../fixtures/inputs/hostile.js';
import { waitFor } from '../support/wait-for.js';
import { type Harness, listFiles, makeHarness, makePdf } from './support/agent-harness.js';
import { makePartWorld, type PartWorld } from './support/step-context.js';

const inspectors: Inspector[] = [];
const worlds: PartWorld[] = [];

/** An inspector whose checks of each file name are counted (the real checks run). */
function countingInspector(limits: ConstructorParameters<typeof Inspector>[0] = { workers: 1 }) {
  const inspector = new Inspector(limits);
  inspectors.push(inspector);
  const spy = vi.spyOn(inspector, 'runTracked');
  const checksOf = (name: string) =>
    spy.mock.calls.filter(([task, fileName]) => task === 'inspectFile' && fileName === name).length;
  return { inspector, checksOf };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});
afterAll(async () => {
  for (const i of inspectors.splice(0)) await i.close();
});

describe('a small file from claim to verdict', () => {
  function setUp() {
    const world = makePartWorld(['pdf']);
    worlds.push(world);
    const counting = countingInspector();
    world.ctx.inspector = counting.inspector;
    world.ctx.held = new Map<number, HeldFile>();
    return { world, runtime: world.folders.get('pdf')!, ...counting };
  }

  it('refuses a file whose check at the claim failed with that verdict, parsing it once', async () => {
    const { world, runtime, checksOf } = setUp();
    const claimedPath = world.putClaimed('pdf', 'bad.pdf', garbagePdf());
    const { item } = await intakeItem(world.ctx, runtime, {
      name: 'bad.pdf',
      originalPath: path.join(world.dir, 'pdf', 'bad.pdf'),
      claimedPath,
    });
    expect(item.state).toBe('claimed');
    const judged = await validateItem(world.ctx, runtime, item, false);
    expect(judged).toMatchObject({ state: 'rejected', rejectCode: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(checksOf('bad.pdf')).toBe(1);
  });

  it('claims a file that passed its check at the claim validated, parsing it once', async () => {
    const { world, runtime, checksOf } = setUp();
    const claimedPath = world.putClaimed('pdf', 'good.pdf', await makePdf('good'));
    const { item } = await intakeItem(world.ctx, runtime, {
      name: 'good.pdf',
      originalPath: path.join(world.dir, 'pdf', 'good.pdf'),
      claimedPath,
    });
    expect(item.state).toBe('creating');
    expect(checksOf('good.pdf')).toBe(1);
  });

  it('clears the inspection record in the claim’s own commit, not by a commit of its own', async () => {
    const { world, runtime } = setUp();
    const ended = vi.spyOn(world.ctx.journal, 'inspectionEnded');
    const claims = vi.spyOn(world.ctx.journal, 'recordClaim');
    const claimedPath = world.putClaimed('pdf', 'good.pdf', await makePdf('good'));
    await intakeItem(world.ctx, runtime, {
      name: 'good.pdf',
      originalPath: path.join(world.dir, 'pdf', 'good.pdf'),
      claimedPath,
    });
    expect(claims.mock.calls[0]?.[0]).toMatchObject({ inspectedPath: claimedPath });
    expect(ended).not.toHaveBeenCalled();
    expect(await world.ctx.journal.interruptedInspections(claimedPath)).toBe(0);
  });

  it('clears the inspection record alone when the claim fails, and passes the failure on', async () => {
    const { world, runtime } = setUp();
    const claims = vi
      .spyOn(world.ctx.journal, 'recordClaim')
      .mockRejectedValueOnce(new Error('journal down'));
    const claimedPath = world.putClaimed('pdf', 'good.pdf', await makePdf('good'));
    const intake = intakeItem(world.ctx, runtime, {
      name: 'good.pdf',
      originalPath: path.join(world.dir, 'pdf', 'good.pdf'),
      claimedPath,
    });
    await expect(intake).rejects.toThrow('journal down');
    // Handed to the claim, which failed: cleared by the intake itself.
    expect(claims.mock.calls[0]?.[0]).toMatchObject({ inspectedPath: claimedPath });
    expect(await world.ctx.journal.interruptedInspections(claimedPath)).toBe(0);
  });
});

describe('verdicts reused by content and settings', () => {
  function setUp() {
    const world = makePartWorld(['pdf']);
    worlds.push(world);
    const counting = countingInspector();
    world.ctx.inspector = counting.inspector;
    world.ctx.verdicts = new VerdictCache();
    return { world, runtime: world.folders.get('pdf')!, ...counting };
  }

  it('answers the same bytes under another name from the verdict, naming the new file', async () => {
    const { world, runtime, checksOf } = setUp();
    const bytes = garbagePdf();
    const first = world.putClaimed('pdf', 'one.pdf', bytes);
    const second = world.putClaimed('pdf', 'two.pdf', bytes);
    const a = await inspect(world.ctx, runtime, 'one.pdf', first, undefined, sha256(bytes));
    const b = await inspect(world.ctx, runtime, 'two.pdf', second, undefined, sha256(bytes));
    expect(a).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(b).toMatchObject({ ok: false, code: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(!b.ok && b.reason).toContain('"two.pdf"');
    expect(!b.ok && b.reason).not.toContain('one.pdf');
    expect(checksOf('one.pdf') + checksOf('two.pdf')).toBe(1);
  });

  it('inspects again under other inspection limits, another workflow, another size limit or a hard link', async () => {
    const { world, runtime, checksOf } = setUp();
    const bytes = garbagePdf();
    const file = world.putClaimed('pdf', 'again.pdf', bytes);
    const check = () => inspect(world.ctx, runtime, 'again.pdf', file, undefined, sha256(bytes));
    await check();
    await check();
    expect(checksOf('again.pdf')).toBe(1);

    const { inspector: tighter, checksOf: tighterChecks } = countingInspector({
      workers: 1,
      timeLimit: 20_000,
    });
    world.ctx.inspector = tighter;
    await check();
    await check();
    expect(tighterChecks('again.pdf')).toBe(1);

    world.ctx.maxFileBytes += 1;
    await check();
    const payloadPdf = { ...runtime.workflow, inputSource: { type: 'PAYLOAD_PDF' } } as unknown as Workflow;
    await inspect(
      world.ctx,
      { ...runtime, workflow: payloadPdf },
      'again.pdf',
      file,
      undefined,
      sha256(bytes),
    );
    linkSync(file, path.join(world.dir, 'elsewhere.pdf'));
    const linked = await check();
    expect(linked).toMatchObject({ ok: false, code: 'DOCEX_INPUT_HARD_LINK' });
    expect(tighterChecks('again.pdf')).toBe(4);
    expect(checksOf('again.pdf')).toBe(1);
  });
});

describe('a running agent', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterEach(async () => {
    await h.stopAgents();
  });
  afterAll(async () => {
    await h.cleanup();
  });

  it('parses a refused and an accepted small PDF once each, and a copy of the refused one not at all', async () => {
    const { inspector, checksOf } = countingInspector();
    const agent = await h.startAgent(h.config([{ name: 'pdf', workflowId: SEED.workflows.pdfEmail }]), {
      inspector,
    });
    const errors = path.join(h.dir, 'error', 'pdf');
    h.drop('pdf', 'refused.pdf', garbagePdf());
    h.drop('pdf', 'accepted.pdf', await makePdf('accepted once'));
    await waitFor(() => listFiles(errors).includes('refused.pdf.error.json'));
    await waitFor(
      async () =>
        (await agent.journal.byPath(path.join(h.folderPath('pdf'), 'accepted.pdf')))[0]?.state === 'done',
    );
    h.drop('pdf', 'refused-copy.pdf', garbagePdf());
    await waitFor(() => listFiles(errors).includes('refused-copy.pdf.error.json'));
    const record = JSON.parse(readFileSync(path.join(errors, 'refused-copy.pdf.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_PDF_CORRUPT' });
    expect(record.reason).toContain('"refused-copy.pdf"');
    expect([checksOf('refused.pdf'), checksOf('accepted.pdf'), checksOf('refused-copy.pdf')]).toEqual([
      1, 1, 0,
    ]);
  });
});
