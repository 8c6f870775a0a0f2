/**
 * The suspect/poison rule alone, on a real journal and the real isolated inspector: a crash during
 * an inspection is simulated by an inspection recorded as started and never ended.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Inspector } from '../../src/pipeline/isolate/inspector.js';
import { POISON_CRASHES, setAsideIfPoison } from '../../src/pipeline/poison-files.js';
import { listFiles, makePdf } from './support/agent-harness.js';
import { makePartWorld, type PartWorld } from './support/step-context.js';

const worlds: PartWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

function setUp() {
  const world = makePartWorld(['pdf']);
  worlds.push(world);
  const runtime = world.folders.get('pdf')!;
  /** Inspections of `filePath` that crashes cut short. */
  const crashDuringInspection = async (filePath: string, times: number) => {
    for (let i = 0; i < times; i++) await world.journal.inspectionStarting(filePath);
  };
  return { world, runtime, crashDuringInspection };
}

describe('setAsideIfPoison', () => {
  it('takes up a file no crash interrupted, without inspecting it first', async () => {
    const { world, runtime } = setUp();
    const filePath = world.putClaimed('pdf', 'fine.pdf', await makePdf('fine'));
    const inspections: string[] = [];
    world.ctx.inspector = {
      runTracked: async (_task: string, name: string) => {
        inspections.push(name);
        return { ok: true, kind: 'pdf' };
      },
    } as unknown as Inspector;
    expect(await setAsideIfPoison(world.ctx, runtime, { name: 'fine.pdf', path: filePath })).toBe(false);
    expect(inspections).toEqual([]);
  });

  it('inspects a suspect (one interrupted inspection) alone, takes it up, and clears its record when it passes', async () => {
    const { world, runtime, crashDuringInspection } = setUp();
    const filePath = world.putClaimed('pdf', 'suspect.pdf', await makePdf('a good file'));
    await crashDuringInspection(filePath, POISON_CRASHES - 1);
    expect(await setAsideIfPoison(world.ctx, runtime, { name: 'suspect.pdf', path: filePath })).toBe(false);
    expect(await world.journal.interruptedInspections(filePath)).toBe(0);
    expect(existsSync(filePath)).toBe(true);
  });

  it('sets a file aside after POISON_CRASHES interrupted inspections, rejecting its unfinished item', async () => {
    const { world, runtime, crashDuringInspection } = setUp();
    const filePath = world.putClaimed('pdf', 'poison.pdf', await makePdf('kills the agent'));
    const item = await world.recordClaim('pdf', filePath);
    await crashDuringInspection(filePath, POISON_CRASHES);
    expect(await setAsideIfPoison(world.ctx, runtime, { name: 'poison.pdf', path: filePath })).toBe(true);
    expect(await world.journal.get(item.id)).toMatchObject({
      state: 'rejected',
      rejectCode: 'DOCEX_INPUT_POISON',
    });
    expect(existsSync(filePath)).toBe(false);
    expect(listFiles(runtime.config.errorDir)).toContain('poison.pdf');
    expect(await world.journal.interruptedInspections(filePath)).toBe(0);
  });

  it('refuses a poison file with no item into the error folder, with what the operator should do', async () => {
    const { world, runtime, crashDuringInspection } = setUp();
    const filePath = world.putClaimed('pdf', 'unrecorded.pdf', await makePdf('never claimed'));
    await crashDuringInspection(filePath, POISON_CRASHES + 1);
    expect(await setAsideIfPoison(world.ctx, runtime, { name: 'unrecorded.pdf', path: filePath })).toBe(true);
    const errorDir = runtime.config.errorDir;
    const record = JSON.parse(readFileSync(path.join(errorDir, 'unrecorded.pdf.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_POISON', file: 'unrecorded.pdf' });
    expect(readFileSync(path.join(errorDir, 'unrecorded.pdf.error.txt'), 'utf8')).toContain(
      'send it to the agent’s maintainers',
    );
    expect(await world.journal.interruptedInspections(filePath)).toBe(0);
  });
});
