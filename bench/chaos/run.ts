/**
 * `npm run chaos [-- options]`: the fault scenarios in a row, a table on stdout, and (a full run,
 * or --write) docs/chaos.md and docs/chaos.json. Exits 1 when any invariant failed.
 *   --quick            small sizes (about a minute or two for all), prints only unless --write
 *   --only a,b         a subset: kill, lost-answers, service-faults, token-down, slow-link, disk-full, clock-jump,
 *                      sftp-drops, pg-restart, pg-cut, ha-kill, ha-freeze, ha-sftp-kill, ha-sftp-freeze,
 *                      ha-pg-restart, ha-pg-cut, ha-webhook (pg-* and ha-*: PostgreSQL journal only;
 *                      ha-*: two agents on one journal and one folder, ha-sftp-*: an SFTP folder,
 *                      ha-webhook: every webhook delivered to both agents, the return path checked);
 *                      mixed (all faults at a low dose, the test suite's small run) only when named
 *   --modes a,b|all    intake modes (bench/chaos/modes.ts): pdf, routed, zip-pdfs, data-csv, data-xml,
 *                      ubl, word-csv, word-json, word-xml, pdf-sidecar, pdf-batch, pdf-index; default
 *                      all. Each scenario runs once per mode (a cell of the matrix); modes other than
 *                      pdf drop --set-files document sets (default 100, quick 20)
 *   --rows N           documents per set of the payload-word, ZIP and batch modes (default 3)
 *   --files N          every scenario's file count (document sets in a mode other than pdf)
 *   --kills K          kills of the kill scenario (default 20; quick 5)
 *   --outage-s S       how long the token endpoint is down (default 60; quick 8)
 *   --journal a,b      sqlite, postgres or both (default sqlite): the journal of each cell, a column of
 *                      the matrix. postgres: a PostgreSQL server of the cell's own (test/support/postgres.ts)
 *   --faults N         restarts of pg-restart and ha-pg-restart, cuts of pg-cut and ha-pg-cut, freezes
 *                      of ha-freeze (default quick 3, 4 and 3 (ha-pg-cut 3), full 8, 12 and 8);
 *                      --kills also sets ha-kill's and ha-webhook's kills (quick 4, full 12)
 *   --seed N           the random moments (kills, stalls), to replay a failing run
 *   --write            write the docs after a quick or partial run too
 *   --merge            with --write: replace only these scenarios' rows in docs/chaos.json and .md
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postgresAvailable } from '../../test/support/postgres.js';
import { AGENT_BUILD_DIR, buildAgent, removeAgentBuild } from '../support/build-agent.js';
import { machine } from '../support/stats.js';
import { CHAOS_MODES, type ChaosMode, modeNamed, setRowsPerSet } from './modes.js';
import { type ChaosReport, cellKey, consoleTable, journalOf, markdown, modeOf, passed } from './report.js';
import type { ChaosSizes, Scenario } from './scenario.js';
import { EXTRA_SCENARIOS, SCENARIOS } from './scenarios/index.js';
import type { ChaosJournal } from './world.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    merge: { type: 'boolean', default: false },
    only: { type: 'string' },
    modes: { type: 'string' },
    'set-files': { type: 'string' },
    rows: { type: 'string' },
    files: { type: 'string' },
    kills: { type: 'string' },
    journal: { type: 'string' },
    faults: { type: 'string' },
    'outage-s': { type: 'string' },
    seed: { type: 'string' },
  },
});

const num = (text: string | undefined) => (text === undefined ? undefined : Number(text));
const sizes: ChaosSizes = {
  quick: values.quick,
  seed: num(values.seed) ?? Date.now() % 100_000,
  ...(values.files ? { files: num(values.files)! } : {}),
  ...(values.kills ? { kills: num(values.kills)! } : {}),
  ...(values['outage-s'] ? { outageMs: num(values['outage-s'])! * 1000 } : {}),
  ...(values.faults ? { faults: num(values.faults)! } : {}),
};
const journals = (values.journal ?? 'sqlite').split(',').map((j) => j.trim());
const badJournal = journals.filter((j) => j !== 'sqlite' && j !== 'postgres');
if (badJournal.length > 0) {
  process.stderr.write(`unknown journal(s): ${badJournal.join(', ')}; known: sqlite, postgres\n`);
  process.exit(2);
}
/** The order of a cell's rows: SQLite's first. */
const JOURNALS: readonly ChaosJournal[] = ['sqlite', 'postgres'];
/** A scenario's journals: its own (PostgreSQL-only ones), else those of --journal. */
const journalsOf = (scenario: Scenario): ChaosJournal[] =>
  scenario.journals ? [...scenario.journals] : (journals as ChaosJournal[]);
const only = values.only?.split(',').map((s) => s.trim());
const all = [...SCENARIOS, ...EXTRA_SCENARIOS];
const unknown = only?.filter((name) => !all.some((s) => s.name === name)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(
    `unknown scenario(s): ${unknown.join(', ')}; known: ${all.map((s) => s.name).join(', ')}\n`,
  );
  process.exit(2);
}
const chosen: Scenario[] = only ? all.filter((s) => only.includes(s.name)) : [...SCENARIOS];

const modes: ChaosMode[] =
  (values.modes ?? 'all') === 'all'
    ? [...CHAOS_MODES]
    : (values.modes ?? '').split(',').map((m) => modeNamed(m.trim()));
if (values.rows !== undefined) setRowsPerSet(num(values.rows)!);
const setFiles = num(values['set-files']) ?? (sizes.quick ? 20 : 100);

// Every cell starts agents, some twenty: compiled JavaScript starts in a fraction of tsx's time.
const buildDir = path.join(AGENT_BUILD_DIR, '..', `docex-chaos-${process.pid}`);
sizes.agentEntry = buildAgent(buildDir);

const report: ChaosReport = { machine: machine(), quick: sizes.quick, seed: sizes.seed, results: [] };
for (const scenario of chosen) {
  for (const mode of modes) {
    for (const journal of journalsOf(scenario)) {
      // Single PDFs keep each scenario's own size; a set of another mode is several files and jobs.
      const cellSizes: ChaosSizes = {
        ...(mode.name === 'pdf' ? sizes : { ...sizes, mode, files: sizes.files ?? setFiles }),
        journal,
      };
      const cell = `${scenario.name}/${mode.name}${journal === 'postgres' ? '/postgres' : ''}`;
      process.stderr.write(`chaos: ${cell} (${scenario.fault}) ...\n`);
      // A cell a scenario skips (no sshd, a mode it does not offer) still names its mode and journal.
      const named = { mode: mode.name, ...(journal === 'postgres' ? { journal } : {}) };
      const result =
        journal === 'postgres' && !postgresAvailable
          ? {
              ...named,
              scenario: scenario.name,
              fault: scenario.fault,
              injected: 0,
              injectedDetail: '',
              affected: 0,
              files: 0,
              durationMs: 0,
              skipped: 'PostgreSQL is not installed here (initdb, pg_ctl, postgres)',
            }
          : { ...named, ...(await scenario.run(cellSizes)) };
      report.results.push(result);
      process.stderr.write(
        `chaos: ${cell} ${passed(result) ? 'held' : 'FAILED'} in ${(result.durationMs / 1000).toFixed(0)} s\n`,
      );
    }
  }
}
process.stdout.write(`${consoleTable(report)}\n`);

if (values.write || (!sizes.quick && !only)) {
  const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');
  mkdirSync(docs, { recursive: true });
  const jsonFile = path.join(docs, 'chaos.json');
  let written = report;
  if (values.merge && existsSync(jsonFile)) {
    const saved = JSON.parse(readFileSync(jsonFile, 'utf8')) as ChaosReport;
    const fresh = new Map(report.results.map((r) => [cellKey(r), r]));
    const kept = saved.results.filter((r) => !fresh.has(cellKey(r)));
    const order = all.map((s) => s.name);
    const modeOrder = CHAOS_MODES.map((m) => m.name);
    const results = [...kept, ...report.results].sort(
      (a, b) =>
        order.indexOf(a.scenario) - order.indexOf(b.scenario) ||
        modeOrder.indexOf(modeOf(a)) - modeOrder.indexOf(modeOf(b)) ||
        JOURNALS.indexOf(journalOf(a)) - JOURNALS.indexOf(journalOf(b)),
    );
    const merged = {
      machine: report.machine,
      quick: report.quick,
      seed: report.seed,
      scenarios: [...fresh.keys()],
    };
    written = { ...saved, results, merged: [...(saved.merged ?? []), merged] };
  }
  writeFileSync(path.join(docs, 'chaos.md'), markdown(written));
  writeFileSync(jsonFile, `${JSON.stringify(written, null, 2)}\n`);
  process.stdout.write('wrote docs/chaos.md and docs/chaos.json\n');
}
removeAgentBuild(buildDir);
process.exit(report.results.every(passed) ? 0 : 1);
