/**
 * The routed multi-company tree of the chaos matrix (mode `routed`, bench/chaos/modes.ts) at CI
 * size: one folder whose file names carry the company, routed by `{company}-*.pdf` through the
 * folder's companies table to each managed company's own workflow (acme's and globex's), by
 * `partner-*.pdf` to the partner's own workflow and by `*-credit.pdf` to another workflow of the
 * partner. Under SIGKILLs, and under lost answers with SIGKILLs, every
 * document ends with exactly one job, in the workflow and company its route says (the company the
 * sandbox recorded for the job). DOCEX_CHAOS_SEED replays a run.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modeNamed } from '../../bench/chaos/modes.js';
import { killScenario } from '../../bench/chaos/scenarios/kill.js';
import { lostAnswersScenario } from '../../bench/chaos/scenarios/lost-answers.js';
import { AGENT_BUILD_DIR, buildAgent, removeAgentBuild } from '../../bench/support/build-agent.js';
import { SEED as SEED_IDS } from '../../src/sandbox/seed-ids.js';

const SEED = Number(process.env['DOCEX_CHAOS_SEED'] ?? Date.now() % 100_000);

let agentEntry: string;
const buildDir = path.join(AGENT_BUILD_DIR, '..', `docex-chaos-routed-${process.pid}`);
beforeAll(() => {
  agentEntry = buildAgent(buildDir);
}, 120_000);
afterAll(() => removeAgentBuild(buildDir));

it('the routed tree spreads its files over two managed companies and the partner, each on its own workflows', async () => {
  const mode = modeNamed('routed');
  const routes = await Promise.all([0, 1, 2, 3].map(async (i) => (await mode.make(i, 'tree')).route));
  expect(routes).toEqual([
    { workflowId: SEED_IDS.workflows.managedPdfEmail, companyId: SEED_IDS.managedCompanyId },
    { workflowId: SEED_IDS.workflows.secondManagedPdfEmail, companyId: SEED_IDS.secondManagedCompanyId },
    { workflowId: SEED_IDS.workflows.pdfEmail, companyId: SEED_IDS.partnerCompanyId },
    { workflowId: SEED_IDS.workflows.pdfPrint, companyId: SEED_IDS.partnerCompanyId },
  ]);
});

describe.each([
  ['SIGKILLs', killScenario, 3],
  ['lost answers and SIGKILLs', lostAnswersScenario, 2],
] as const)('the routed tree of 24 files under %s', (_fault, scenario, kills) => {
  it('ends with one job per document, in the workflow and company of its route, every file archived once', async () => {
    const result = await scenario.run({
      quick: true,
      files: 24,
      kills,
      seed: SEED,
      mode: modeNamed('routed'),
      agentEntry,
    });
    const context = `seed ${SEED}: ${result.error ?? ''}\n${result.report?.violations.join('\n') ?? ''}`;
    expect(result.error, context).toBeUndefined();
    expect(result.report?.violations, context).toEqual([]);
    expect(result.report).toMatchObject({
      ok: true,
      files: 24,
      documents: 24,
      archived: 24,
      refused: 0,
      lost: [],
      duplicates: [],
      misrouted: [],
    });
    expect(result.injected, result.injectedDetail).toBeGreaterThanOrEqual(kills);
  }, 240_000);
});
