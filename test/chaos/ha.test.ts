/**
 * Several agents on one PostgreSQL journal and one drop folder, at the test suite's size
 * (`npm run chaos -- --only ha-kill,ha-freeze` is the full one): agent processes, a PostgreSQL
 * server and the sandbox of the run's own, leases of 3 s. One of two agents SIGKILLed and replaced
 * by a new one; one of two frozen past its lease and let go. Every document must end with one job
 * and every file placed once, none lost, none stuck. DOCEX_CHAOS_SEED replays a failing run.
 */
import { expect, it } from 'vitest';
import type { Scenario } from '../../bench/chaos/scenario.js';
import { haFreezeScenario, haKillScenario } from '../../bench/chaos/scenarios/ha.js';
import { describePostgres } from '../support/postgres.js';

const SEED = Number(process.env['DOCEX_CHAOS_SEED'] ?? Date.now() % 100_000);
const FILES = 24;

async function runCell(scenario: Scenario, faults: { kills?: number; faults?: number }) {
  const result = await scenario.run({ quick: true, files: FILES, seed: SEED, ...faults });
  const context = `seed ${SEED}: ${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}\n${result.injectedDetail}`;
  expect(result.error, context).toBeUndefined();
  expect(result.report?.violations, context).toEqual([]);
  expect(result.report, context).toMatchObject({
    ok: true,
    files: FILES,
    archived: FILES,
    refused: 0,
    lost: [],
    duplicates: [],
  });
  return result;
}

describePostgres('chaos: several agents on one PostgreSQL journal and one drop folder', () => {
  it('ends with one job per document and every file placed once when one of two agents is SIGKILLed and replaced', async () => {
    const result = await runCell(haKillScenario, { kills: 2 });
    expect(result.injected).toBe(2);
    expect(result.injectedDetail).toMatch(/^2 SIGKILL of one of two agents; \d+ files taken over/);
    // Each kill found its agent holding a file: the others took it over.
    expect(result.affected, result.injectedDetail).toBeGreaterThan(0);
  }, 180_000);

  it('ends with one job per document and every file placed once when one of two agents is frozen past its lease', async () => {
    const result = await runCell(haFreezeScenario, { faults: 2 });
    expect(result.injected).toBe(2);
    // Each freeze found its agent holding a file: the other took it over, and the frozen one,
    // let go, found its lease lost (or its next step left the file to the new holder).
    expect(result.affected, result.injectedDetail).toBeGreaterThan(0);
    expect(result.injectedDetail).not.toMatch(/ 0 leases found lost, 0 steps left/);
  }, 180_000);
});
