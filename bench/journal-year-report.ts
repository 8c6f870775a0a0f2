/** The journal-year scenario's rows, targets and notes for bench/report.ts (issue 30). */
import { type JournalYearResult, RETENTION_DAYS, type StartUpFigures } from './journal-year.js';

type Outcome = JournalYearResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
/** The memory ceiling (the backlog's and the return path's). */
export const YEAR_PEAK_RSS_MIB = 256;

const times = (a: number, b: number) => `${(a / b).toFixed(2)}× the empty journal`;

export function journalYearRows(r: Outcome): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [['journal-year', 'failed', r.error, '', '', '']];
  const where = r.journal === 'postgres' ? ' (PostgreSQL)' : '';
  const name = `a year in the journal${where}: ${r.files.toLocaleString('en')} files (${r.filled.prunedDone.toLocaleString('en')} pruned), retention ${RETENTION_DAYS} d`;
  const row = (
    column: string,
    figure: (f: StartUpFigures) => string,
    ratio?: (f: StartUpFigures) => number,
  ) => [
    [name, `empty journal: ${column}`, figure(r.empty), '', '', ''],
    [name, `year: ${column}`, figure(r.year), '', '', ratio ? times(ratio(r.year), ratio(r.empty)) : ''],
  ];
  return [
    ...row(
      'spawn → "agent started", → /readyz 200',
      (f) => `${f.startedMs} ms, ${f.readyMs} ms`,
      (f) => f.readyMs,
    ),
    ...row('CPU at ready', (f) => `${f.cpuAtReadyMs ?? '?'} ms`),
    ...row(
      `peak RSS, RSS ${r.idleSeconds} s after ready`,
      (f) => `${f.peakRssMiB} MiB, ${f.idleRssMiB} MiB`,
      (f) => f.peakRssMiB,
    ),
    ...row(
      'first GET /metrics, peak RSS after it',
      (f) => `${f.firstMetricsMs} ms, ${f.peakRssAfterMetricsMiB} MiB`,
      (f) => f.peakRssAfterMetricsMiB,
    ),
    ...(r.journal === 'postgres'
      ? row('the database (every store)', (f) => `${f.journalMiB} MiB`)
      : row('journal.sqlite, returns.sqlite', (f) => `${f.journalMiB} MiB, ${f.returnsMiB} MiB`)),
  ];
}

export function journalYearTargets(r: Outcome): string[] {
  if (r === undefined || isError(r)) return [];
  const peak = Math.max(r.year.peakRssMiB, r.year.peakRssAfterMetricsMiB);
  return [
    `A year in the ${r.journal === 'postgres' ? 'PostgreSQL ' : ''}journal (${r.files.toLocaleString('en')} files): ready ${r.year.readyMs} ms after spawn (${r.readyRatio}× the empty journal's ${r.empty.readyMs} ms), peak RSS ${r.year.peakRssMiB} MiB (${r.peakRssRatio}×); peak < ${YEAR_PEAK_RSS_MIB} MiB with the first /metrics scrape: ${peak} MiB — ${mark(peak < YEAR_PEAK_RSS_MIB)}.`,
  ];
}

export const JOURNAL_YEAR_NOTES = `## A year in the journal (issue 30)
- \`npm run bench -- --only journal-year\` (\`--year-files N\`, default 1,000,000, quick 100,000;
  \`--year-idle-seconds S\`, default 5). The agent as installed, one local drop folder (empty),
  statuses and proofs on, \`journal.retention: ${RETENTION_DAYS}d\`, against a sandbox process;
  started once on an empty state folder and once on the year, in the same run.
- The year (bench/journal-year.ts, set-up not measured): the journal is created by the real
  journal (its migrations), then filled in one transaction: N file items over 365 nights, one in
  100 refused as a duplicate and one in 500 refused otherwise, as the agent's pruning leaves them
  after ${RETENTION_DAYS} days: an older done file keeps its row and nothing else, an older refusal is gone
  (its id a gap), the last ${RETENTION_DAYS} nights keep their history (six moves per file); five files of
  the last night are unfinished (uploaded, their copy in \`.processing/\`), which recovery finishes.
  The returns store beside it, which nothing prunes, holds a source, a finished job, one final
  event and its saved proof per sent file, the feed's cursor at the journal's end and every daily CSV written.
- Figures: spawn to the "agent started" log line and to /readyz answering 200; CPU (user +
  system) at ready; VmHWM and VmRSS after the rest; the first GET /metrics after it (its journal
  totals sum the history once, in chunks) and VmHWM after it; the files' sizes.
- What grew with the year before this scenario (each fixed, with a test of the query plan or of
  what is read; figures at 1,000,000 files): the journal's unfinished items (\`state NOT IN\` scanned
  every item twice at start-up, for the "journal opened" count and the recovery plan: 293 ms and
  18 MB of page cache each), the status pass's stale sources (every source at each pass, 236 ms),
  the daily CSV's days due (a DISTINCT over every event, 133 ms; now one index seek per day), the
  pruning pass a minute after start and every 6 hours (4.6 s of CPU going through the 750,000
  files pruned before; 0.45 s now), and the first GET /metrics, which summed the 1.5 million
  history entries as one JS object each (peak RSS 447.8 MiB; now counted in the journal, GROUP BY
  per range of 10,000 ids, and the readers keep SQLite's 2 MB page cache rather than
  better-sqlite3's 16 MB). That first scrape still takes about 3 s (the join of the history with
  its items, in chunks with a turn of the event loop between). Left as they are, measured on
  the returns store of a year with its 997,469 proofs: the "returns started" log line counts every
  job, event and proof at each start (66-114 ms of CPU, 253 ms cold), and each GET /metrics counts
  the saved proofs (42-47 ms on the event loop).
- \`--only journal-year-pg\`: the same with the journal in PostgreSQL (the bench's own server): the
  year is moved there by \`journal copy\` (copyStateToPostgres, counted in the set-up time) and
  the SQLite files set aside; each arm on a fresh database. Found there: the copied tables had no
  statistics (the first /readyz's pending-uploads query was planned above JIT's threshold, 0.6 s;
  the copy now analyzes them) and the unfinished items were read by a filtered scan of every id
  (the same IN list as SQLite now).`;
