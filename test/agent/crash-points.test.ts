/**
 * A crash at every point where it changes what recovery must do, in every intake mode: a real
 * agent process is armed with DOCEX_TEST_CRASH_AT, ends itself with SIGKILL there, and the next
 * start must finish the drop with exactly one job per document (per payload row, per PDF of a
 * batch) and every file placed once. Sets are dropped one at a time, one crash point each.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAOS_MODES, type ChaosMode } from '../../bench/chaos/modes.js';
import { within } from '../../bench/chaos/scenario.js';
import { createWorld, type World } from '../../bench/chaos/world.js';
import { AGENT_BUILD_DIR, buildAgent, removeAgentBuild } from '../../bench/support/build-agent.js';
import type { CrashPoint } from '../../src/core/crash-points.js';

const SINGLE: readonly CrashPoint[] = [
  'after-claim',
  'before-create',
  'after-create',
  'after-created',
  'after-upload',
  'mid-archive',
];
const ROWS_WITH_UPLOAD: readonly CrashPoint[] = [
  'after-claim',
  'after-rows',
  'before-create',
  'after-create',
  'after-created',
  'after-upload',
  'mid-archive',
];
const ROWS_WITHOUT_UPLOAD = ROWS_WITH_UPLOAD.filter((p) => p !== 'after-upload');

function pointsOf(mode: ChaosMode): readonly CrashPoint[] {
  if (mode.folder['mode'] === 'payload-word') return ROWS_WITHOUT_UPLOAD;
  if (mode.folder['mode'] === 'payload-pdf') return ROWS_WITH_UPLOAD;
  return SINGLE;
}

const PER_DOCUMENT: readonly CrashPoint[] = [
  'before-create',
  'after-create',
  'after-created',
  'after-upload',
];

/** A set of several documents crashes at its second one, half way through the file. */
const occurrence = (documents: number, point: CrashPoint) =>
  documents > 1 && PER_DOCUMENT.includes(point) ? 2 : 1;

let agentEntry: string;
const buildDir = path.join(AGENT_BUILD_DIR, '..', `docex-crash-points-${process.pid}`);
beforeAll(() => {
  // Some hundred agent starts: compiled JavaScript starts in a fraction of tsx's time.
  agentEntry = buildAgent(buildDir);
}, 120_000);
afterAll(() => removeAgentBuild(buildDir));

describe.each(CHAOS_MODES.map((mode) => [mode.name, mode] as const))(
  'crash points, mode %s',
  (_name, mode) => {
    const points = pointsOf(mode);
    let world: World;
    beforeAll(async () => {
      world = await createWorld({
        name: `crash-${mode.name}`,
        files: points.length,
        mode,
        concurrency: 2,
        agentEntry,
      });
    }, 60_000);
    afterAll(async () => {
      await world?.close();
    });

    it(`ends with one job per document after a SIGKILL at each of: ${points.join(', ')}`, async () => {
      for (const [k, point] of points.entries()) {
        world.drop(1);
        const nth = occurrence(world.sets[k]!.documents.length, point);
        const armed = world.startAgent({ DOCEX_TEST_CRASH_AT: `${point}:${nth}` });
        const context = () => `${mode.name} at ${point}:\n${armed.tail.slice(-15).join('\n')}`;
        await within(armed.exited, 60_000, `the crash at ${point}`).catch((err: Error) => {
          throw new Error(`${err.message}; ${context()}`);
        });
        expect(armed.child.signalCode, context()).toBe('SIGKILL');
        const next = world.startAgent();
        await within(Promise.race([next.started, next.exited]), 60_000, 'the restart');
        await world.waitPlaced(60_000, k + 1);
        expect(await world.stopAgent(), `${mode.name} after ${point}`).toBe(0);
      }
      const report = await world.check({ expectArchived: true });
      expect(report.violations, mode.name).toEqual([]);
      expect(report.documents).toBe(world.sets.reduce((n, set) => n + set.documents.length, 0));
    }, 240_000);
  },
);

describe('a file that crashes the agent while it is inspected', () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld({ name: 'crash-poison', files: 2, concurrency: 1, agentEntry });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('is set aside as poison at the start after its second crash, and the agent goes on with the next file', async () => {
    world.drop(1);
    for (let crash = 1; crash <= 2; crash++) {
      const armed = world.startAgent({ DOCEX_TEST_CRASH_AT: 'mid-inspection' });
      await within(armed.exited, 60_000, `crash ${crash} while inspecting`);
      expect(armed.child.signalCode).toBe('SIGKILL');
    }
    // The third start must not inspect it again (it would crash again): it goes to error/ first.
    const agent = world.startAgent({ DOCEX_TEST_CRASH_AT: 'mid-inspection:2' });
    await within(Promise.race([agent.started, agent.exited]), 60_000, 'the third start');
    world.drop(1);
    await world.waitPlaced(60_000);
    expect(await world.stopAgent()).toBe(0);
    const poisoned = world.sets[0]!.itemName;
    const record = JSON.parse(readFileSync(path.join(world.errorDir, `${poisoned}.error.json`), 'utf8')) as {
      code: string;
      reason: string;
    };
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_POISON' });
    expect(record.reason).toMatch(/crashed 2 times while inspecting/);
    expect(agent.tail.some((l) => l.includes('"msg":"poison file set aside"'))).toBe(true);
    const report = await world.check();
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ archived: 1, refused: 1 });
  }, 180_000);
});

describe('a file whose inspection a kill from outside interrupted', () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld({ name: 'crash-suspect', files: 1, concurrency: 1, agentEntry });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('is inspected alone at the next start and, that inspection passing, is sent even when a second kill interrupts its inspection', async () => {
    world.drop(1);
    const first = world.startAgent({ DOCEX_TEST_CRASH_AT: 'mid-inspection' });
    await within(first.exited, 60_000, 'the first crash, while inspecting');
    // Second start: its lone inspection at recovery is the first one (passes); the kill lands on
    // the second, in the middle of the pipeline's work.
    const second = world.startAgent({ DOCEX_TEST_CRASH_AT: 'mid-inspection:2' });
    await within(second.exited, 60_000, 'the second crash, while the pipeline inspects');
    expect(second.child.signalCode).toBe('SIGKILL');
    expect(
      second.tail.some((l) => l.includes('"msg":"file inspected alone: a crash interrupted its inspection"')),
    ).toBe(true);
    const last = world.startAgent();
    await within(Promise.race([last.started, last.exited]), 60_000, 'the third start');
    await world.waitPlaced(60_000);
    expect(await world.stopAgent()).toBe(0);
    const report = await world.check();
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ archived: 1, refused: 0 });
  }, 180_000);
});
