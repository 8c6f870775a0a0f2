/**
 * Several agents on one PostgreSQL journal and one drop folder, local or on a real sshd, at the
 * test suite's size (`npm run chaos -- --only ha-kill,ha-freeze,ha-sftp-kill,ha-sftp-freeze` is the
 * full one): agent processes, a PostgreSQL server and the sandbox of the run's own, leases of 3 s.
 * One of two agents SIGKILLed and replaced by a new one; one of two frozen past its lease and let
 * go; PostgreSQL restarted under both; one of them cut off from it and restored; every webhook
 * delivered to both while one is SIGKILLed (ha-webhook: the return path followed to the end too).
 * Every document must end with one job and every file placed once, none lost, none stuck.
 * DOCEX_CHAOS_SEED replays a failing run.
 */
import { expect, it } from 'vitest';
import type { Scenario } from '../../bench/chaos/scenario.js';
import {
  haFreezeScenario,
  haKillScenario,
  haPgCutScenario,
  haPgRestartScenario,
  haSftpFreezeScenario,
  haSftpKillScenario,
  haWebhookScenario,
} from '../../bench/chaos/scenarios/ha.js';
import { describeSshd } from '../sources/sftp/support/sshd.js';
import { describePostgres } from '../support/postgres.js';

const SEED = Number(process.env['DOCEX_CHAOS_SEED'] ?? Date.now() % 100_000);
const FILES = 24;

async function runCell(scenario: Scenario, faults: { kills?: number; faults?: number }) {
  const result = await scenario.run({ quick: true, files: FILES, seed: SEED, ...faults });
  const context = `seed ${SEED}: ${result.skipped ?? ''}${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}\n${result.injectedDetail}`;
  expect(result.skipped, context).toBeUndefined();
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

  it('ends with one job per document and every file placed once when PostgreSQL restarts under two agents', async () => {
    const result = await runCell(haPgRestartScenario, { faults: 2 });
    expect(result.injected).toBe(2);
    expect(result.injectedDetail).toMatch(/^2 restarts/);
  }, 180_000);

  it('ends with one job per document when one of two agents is cut off from PostgreSQL past its lease and restored', async () => {
    const result = await runCell(haPgCutScenario, { faults: 2 });
    expect(result.injected).toBe(2);
    // The first cut outlasts the lease: the other agent took files over meanwhile.
    expect(result.affected, result.injectedDetail).toBeGreaterThan(0);
  }, 180_000);

  it('writes each proof and final status once, and handles each webhook on one agent, when every delivery reaches both agents and one is SIGKILLed', async () => {
    const result = await runCell(haWebhookScenario, { kills: 2 });
    expect(result.injected).toBe(2);
    // Deliveries came, and reached both agents at once.
    expect(result.injectedDetail).toMatch(/ [1-9]\d* reaching both agents/);
    expect(result.injectedDetail).toMatch(/ [1-9]\d* answered as repeats/);
    expect(result.report?.returns?.proofs, result.injectedDetail).toBeGreaterThan(0);
    expect(result.report?.returns?.statusFiles).toBe(FILES);
  }, 180_000);

  describeSshd('on one SFTP folder, each agent claiming into a folder of its own', () => {
    it('ends with one job per document when one of two agents is SIGKILLed: its claimed files are adopted and taken over', async () => {
      const result = await runCell(haSftpKillScenario, { kills: 2 });
      expect(result.injected).toBe(2);
      expect(result.affected, result.injectedDetail).toBeGreaterThan(0);
    }, 180_000);

    it('ends with one job per document when one of two agents is frozen past its lease, and the woken one sends nothing it lost', async () => {
      const result = await runCell(haSftpFreezeScenario, { faults: 2 });
      expect(result.injected).toBe(2);
      expect(result.affected, result.injectedDetail).toBeGreaterThan(0);
    }, 180_000);
  });
});
