/** Rows, targets and notes of the journal comparison (burst-pg, burst-remote-pg, backlog-pg) for bench/report.ts. */
import type { BacklogJournalsResult, BurstJournalsResult, ServerFigures } from './journal-compare.js';

type Outcome<T> = T | { error: string } | undefined;
const isError = <T extends object>(r: Outcome<T>): r is { error: string } => r !== undefined && 'error' in r;
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
const ofRuns = (runs: readonly number[] | undefined) =>
  runs && runs.length > 1 ? `, median of ${runs.join(' / ')}` : '';

const TARGET_RATIO = 0.8;
const TARGET_FIRST_UPLOAD_MS = 5_000;

function serverRow(name: string, s: ServerFigures | undefined): string[] {
  if (!s) return [name, 'PostgreSQL server', 'statistics not read', '', '', ''];
  return [
    name,
    'PostgreSQL server, per file',
    `${s.statementsPerFile} statements, ${s.commitsPerFile} commits`,
    '',
    '',
    `${s.cpuMsPerFile} ms server CPU, ${s.execMsPerFile} ms executing`,
  ];
}

function burstRows(label: string, r: Outcome<BurstJournalsResult>): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [[label, 'failed', r.error, '', '', '']];
  const name =
    r.latencyMs === undefined
      ? `burst ${r.files}, journal SQLite vs PostgreSQL (pool ${r.poolSize}), c=${r.concurrency}`
      : `burst ${r.files}, service +${r.latencyMs} ms per call, journal SQLite vs PostgreSQL (pool ${r.poolSize}), c=${r.concurrency}`;
  const extra = (a: BurstJournalsResult['sqlite']) =>
    `peak RSS ${a.peakRssMiB ?? '?'} MiB${a.cpuMsPerFile === undefined ? '' : `, agent ${a.cpuMsPerFile} ms CPU/file`}`;
  return [
    [
      name,
      'agent, SQLite journal',
      `${r.sqlite.filesPerSecond} files/s${ofRuns(r.sqlite.runs)}`,
      `${r.sqlite.p50Ms}`,
      `${r.sqlite.p95Ms}`,
      extra(r.sqlite),
    ],
    [
      name,
      'agent, PostgreSQL journal',
      `${r.postgres.filesPerSecond} files/s${ofRuns(r.postgres.runs)}`,
      `${r.postgres.p50Ms}`,
      `${r.postgres.p95Ms}`,
      `${extra(r.postgres)}; ${r.postgresVsSqlite}× SQLite (target ≥ ${TARGET_RATIO}×)`,
    ],
    serverRow(name, r.postgres.server),
  ];
}

function backlogRows(r: Outcome<BacklogJournalsResult>): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [['backlog, SQLite vs PostgreSQL', 'failed', r.error, '', '', '']];
  const name = `backlog ${r.files} files at start-up, journal SQLite vs PostgreSQL (pool ${r.poolSize}), c=${r.concurrency}`;
  const out: string[][] = [];
  for (const [label, a] of [
    ['SQLite', r.sqlite],
    ['PostgreSQL', r.postgres],
  ] as const) {
    const window = a.drained
      ? `all ${a.uploadedInWindow} in ${a.windowSeconds} s`
      : `first ${a.windowSeconds} s`;
    out.push(
      [
        name,
        `agent, ${label}: start → first job created, first upload`,
        `${sec(a.firstCreatedMs)}, ${sec(a.firstUploadedMs)}`,
        '',
        '',
        `target < ${sec(TARGET_FIRST_UPLOAD_MS)}`,
      ],
      [
        name,
        `agent, ${label}: uploads, ${window}`,
        `${a.filesPerSecond} files/s`,
        '',
        '',
        `peak RSS ${a.peakRssMiB ?? '?'} MiB (${a.peakRssAtFirstUploadMiB ?? '?'} MiB at the first upload)${label === 'PostgreSQL' ? `; ${r.postgresVsSqlite}× SQLite (target ≥ ${TARGET_RATIO}×)` : ''}`,
      ],
    );
  }
  out.push(serverRow(name, r.postgres.server));
  return out;
}

export function journalRows(
  burst: Outcome<BurstJournalsResult>,
  remote: Outcome<BurstJournalsResult>,
  backlog: Outcome<BacklogJournalsResult>,
): string[][] {
  return [
    ...burstRows('burst, SQLite vs PostgreSQL', burst),
    ...burstRows('burst, remote service, SQLite vs PostgreSQL', remote),
    ...backlogRows(backlog),
  ];
}

export function journalTargets(
  burst: Outcome<BurstJournalsResult>,
  remote: Outcome<BurstJournalsResult>,
  backlog: Outcome<BacklogJournalsResult>,
): string[] {
  const out: string[] = [];
  for (const [label, r] of [
    ['Burst', burst],
    ['Burst, service 25 ms away', remote],
  ] as const) {
    if (!r || isError(r)) continue;
    out.push(
      `${label}, PostgreSQL journal ≥ ${TARGET_RATIO}× SQLite: ${r.postgresVsSqlite}× (${r.postgres.filesPerSecond} against ${r.sqlite.filesPerSecond} files/s) — ${mark(r.postgresVsSqlite >= TARGET_RATIO)}.`,
    );
  }
  if (backlog && !isError(backlog)) {
    const b = backlog;
    out.push(
      `Backlog, PostgreSQL journal ≥ ${TARGET_RATIO}× SQLite: ${b.postgresVsSqlite}× (${b.postgres.filesPerSecond} against ${b.sqlite.filesPerSecond} files/s) — ${mark(b.postgresVsSqlite >= TARGET_RATIO)}.`,
    );
    for (const [label, a] of [
      ['SQLite', b.sqlite],
      ['PostgreSQL', b.postgres],
    ] as const) {
      out.push(
        `Backlog of ${b.files}, ${label} journal, first submission < ${sec(TARGET_FIRST_UPLOAD_MS)}: ${sec(a.firstUploadedMs)} — ${mark(a.firstUploadedMs < TARGET_FIRST_UPLOAD_MS)}.`,
      );
    }
  }
  return out;
}

/** The statements the server ran per file, most frequent first (pg_stat_statements). */
function statementTable(title: string, s: ServerFigures | undefined): string[] {
  if (!s) return [];
  const rows = s.top.filter((t) => t.perFile >= 0.01).slice(0, 15);
  return [
    '',
    `${title}: ${s.statementsPerFile} statements and ${s.commitsPerFile} commits per file (${s.files} files); the server spent ${s.execMsPerFile} ms per file executing them and ${s.cpuMsPerFile} ms of CPU per file in all its processes.`,
    '',
    '| per file | calls | server ms | statement (normalised) |',
    '|---|---|---|---|',
    ...rows.map(
      (t) =>
        `| ${t.perFile} | ${t.calls} | ${t.totalMs} | \`${t.query.replaceAll('|', '\\|').replaceAll('`', "'")}\` |`,
    ),
  ];
}

export function journalNotes(
  burst: Outcome<BurstJournalsResult>,
  remote: Outcome<BurstJournalsResult>,
  backlog: Outcome<BacklogJournalsResult>,
): string {
  const ok = <T extends object>(r: Outcome<T>): T | undefined => (r && !isError(r) ? r : undefined);
  return [
    '## The PostgreSQL journal beside SQLite',
    'The same agent build, the same sandbox process, the journal once in journal.sqlite of the state',
    'folder and once in a PostgreSQL database (`journal: { url, sslmode: disable }`, poolSize as the',
    'rows say; the configuration’s default is 4). The bench starts its own server',
    '(test/support/postgres.ts: initdb into a temp folder, 127.0.0.1 on a free port) with',
    'PostgreSQL’s durability defaults put back (fsync, full_page_writes, synchronous_commit on;',
    'the test suite turns the first two off), shared_buffers 128 MB and pg_stat_statements loaded;',
    'every agent run gets a fresh database. The server shares the two cores with the agent and',
    'the sandbox, and its CPU is not in the agent’s figure: the server row gives it. Statements are',
    'counted by pg_stat_statements (BEGIN and COMMIT included: each statement is one round trip,',
    'the pg driver does not pipeline), commits by pg_stat_database, both for the run’s database',
    'only, read once the agent had stopped; per file means per file uploaded. The burst compares the',
    'median run of each journal (rounds alternate which goes first); the backlog runs once each,',
    'PostgreSQL first, each on its own copy of the files.',
    ...statementTable('Burst, PostgreSQL journal (the median run)', ok(burst)?.postgres.server),
    ...statementTable('Burst with the service 25 ms away (the median run)', ok(remote)?.postgres.server),
    ...statementTable('Backlog', ok(backlog)?.postgres.server),
    '',
  ].join('\n');
}
