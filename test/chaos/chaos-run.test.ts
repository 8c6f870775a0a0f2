/**
 * The small chaos run of the test suite (`npm run chaos` is the full one): a sandbox process and a
 * real agent process, 5xx and 429 from the sandbox, upload connections reset by the TCP fault proxy
 * in front of the files host, the agent SIGKILLed once mid-run, then run to the end. The invariants
 * must hold: every file archived once, one upload per file with its MD5, nothing partial. Then
 * every intake mode under lost answers and a SIGKILL, counted per document.
 * DOCEX_CHAOS_SEED replays a failing run.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAOS_MODES } from '../../bench/chaos/modes.js';
import { lostAnswersScenario } from '../../bench/chaos/scenarios/lost-answers.js';
import { mixedScenario } from '../../bench/chaos/scenarios/mixed.js';
import { AGENT_BUILD_DIR, buildAgent, removeAgentBuild } from '../../bench/support/build-agent.js';

const SEED = Number(process.env['DOCEX_CHAOS_SEED'] ?? Date.now() % 100_000);

let agentEntry: string;
const buildDir = path.join(AGENT_BUILD_DIR, '..', `docex-chaos-run-${process.pid}`);
beforeAll(() => {
  agentEntry = buildAgent(buildDir);
}, 120_000);
afterAll(() => removeAgentBuild(buildDir));

describe('a small chaos run (5xx, 429, link resets, one SIGKILL)', () => {
  it('ends with every file archived once, uploaded once with its MD5, and no partial file', async () => {
    const result = await mixedScenario.run({ quick: true, files: 24, seed: SEED });
    const context = `seed ${SEED}: ${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}`;
    expect(result.error, context).toBeUndefined();
    expect(result.report?.violations, context).toEqual([]);
    expect(result.report).toMatchObject({
      ok: true,
      files: 24,
      archived: 24,
      refused: 0,
      lost: [],
      duplicates: [],
    });
    // The faults really happened: the kill plus at least one answer of the injector or the proxy.
    expect(result.injected, result.injectedDetail).toBeGreaterThan(1);
  }, 90_000);
});

describe.each(CHAOS_MODES.map((mode) => [mode.name, mode] as const))(
  'lost answers and a SIGKILL, mode %s (the matrix reduced for the test suite)',
  (_name, mode) => {
    it('ends with one job per document and every file archived once', async () => {
      const result = await lostAnswersScenario.run({
        quick: true,
        files: 4,
        kills: 1,
        seed: SEED,
        mode,
        agentEntry,
      });
      const context = `seed ${SEED}: ${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}`;
      expect(result.error, context).toBeUndefined();
      expect(result.report?.violations, context).toEqual([]);
      const documents = result.report?.documents ?? 0;
      expect(documents, 'every set counted').toBeGreaterThanOrEqual(4);
      expect(result.report).toMatchObject({ ok: true, refused: 0, lost: [], duplicates: [] });
    }, 180_000);
  },
);
