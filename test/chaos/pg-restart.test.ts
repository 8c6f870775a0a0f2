/**
 * The pg-restart chaos scenario at the test suite's size (`npm run chaos -- --only pg-restart` is
 * the full one): a real PostgreSQL server of its own holds the agent's journal, the sandbox and the
 * agent run as their own processes, and the server is restarted (`pg_ctl restart -m fast`) and once
 * shut down immediately and started again, each once a share of the files is placed. The agent
 * must pause, resume by itself and end with every file archived once and uploaded once.
 * DOCEX_CHAOS_SEED replays a failing run.
 */
import { expect, it } from 'vitest';
import { pgRestartScenario } from '../../bench/chaos/scenarios/pg-restart.js';
import { describePostgres } from '../support/postgres.js';

const SEED = Number(process.env['DOCEX_CHAOS_SEED'] ?? Date.now() % 100_000);
const FILES = 12;

describePostgres('chaos: the journal’s PostgreSQL server restarted and killed mid-run', () => {
  it('ends with every file archived once and uploaded once, the agent resuming by itself', async () => {
    const result = await pgRestartScenario.run({ quick: true, files: FILES, faults: 2, seed: SEED });
    const context = `seed ${SEED}: ${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}\n${result.injectedDetail}`;
    expect(result.error, context).toBeUndefined();
    expect(result.report?.violations, context).toEqual([]);
    expect(result.report).toMatchObject({
      ok: true,
      files: FILES,
      archived: FILES,
      refused: 0,
      lost: [],
      duplicates: [],
    });
    expect(result.journal).toBe('postgres');
    // Both faults happened: one restart, one immediate shutdown that /readyz reported.
    expect(result.injected).toBe(2);
    expect(result.injectedDetail, context).toMatch(/restart at \d+ files placed/);
    expect(result.injectedDetail, context).toMatch(/immediate shutdown at \d+ files placed/);
    expect(result.injectedDetail, context).toContain('/readyz named the journal: yes');
  }, 60_000);
});
