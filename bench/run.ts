/**
 * `npm run bench [-- options]`: the benchmark scenarios in a row, a table on stdout, and (full run)
 * docs/benchmarks.md and docs/benchmarks.json (a full run of every scenario, or --write).
 *   --quick                 small sizes (about a minute), prints only unless --write
 *   --files N --concurrency C        burst (default 2000, 8)
 *   --rounds R                       burst, burst-remote, large: runs of each column, median reported (3; quick 1)
 *   --service-latency-ms L           burst-remote: the sandbox answers creates and PUTs L ms later (25)
 *   --large-mib M                    large file (default 1024)
 *   --requests N --get-concurrency C GET /jobs/{id} (default 5000, 32)
 *   --sftp-mib M --sftp-files N      SFTP download size and listing size (default 500, 10000)
 *   --backlog-files N --backlog-seconds S   backlog at start-up (default 100000, 60; 0 s: drain it all)
 *   --return-events N --peppol-docs N        return path (default 10000, 10000)
 *   --return-events N,M,…            return path at each size in one run, and a row comparing the
 *                                    proofs' peak RSS (issue 30: within 10 %, < 256 MiB)
 *   --return-concurrency C --baseline-docs N  curl baseline -P (8), curl baseline cap (2000)
 *   --compare-tuned                  return path: the proofs again with the pre-issue-18 tuned follow settings
 *   --idle-folders N --idle-settle-seconds S --idle-window-seconds W   idle (default 10, 60, 60)
 *   --year-files N --year-idle-seconds S   journal-year: the agent started on a journal of N file items
 *                                    as a year of nights leaves it, and on an empty one; RSS S s after
 *                                    ready (default 1000000, 5; quick 100000)
 *          journal-year-pg          the same with the journal in PostgreSQL (the year moved there by
 *                                    `journal copy`)
 *   --paced-rate R --paced-seconds S --paced-files N   paced: pace.rate R/min measured over S s, then
 *                                    N files under a 429 storm (default 600, 60, 10000; quick 600, 10, 300)
 *   --only burst,burst-remote,large,get-job,sftp,backlog,return-path,idle,paced,journal-year  a subset
 *          burst-pg,burst-remote-pg,backlog-pg   the burst, remote burst and backlog with the
 *                                   PostgreSQL journal beside SQLite (a server of its own, started here)
 *   --pg-pool-size N                 journal.poolSize of the PostgreSQL runs (default: the concurrency)
 *          cluster                 two agents on one PostgreSQL journal against one, service L ms away, and
 *                                   the failover time after a SIGKILL (--lease-seconds S, default 15)
 *   --render                         rewrite docs/benchmarks.md from docs/benchmarks.json
 *   --merge                          with --write: this run's scenarios replace theirs in the saved report
 *                                    (named with their date in the .md), the others are kept
 * The same options can be given as BENCH_FILES, BENCH_CONCURRENCY, BENCH_ROUNDS, BENCH_LARGE_MIB, BENCH_REQUESTS.
 * BENCH_MAIN_JS=<dist/cli/main.js> runs that build of the agent instead of compiling this tree.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchBacklog } from './backlog.js';
import { benchBurst, benchBurstRemote } from './burst.js';
import { benchCluster } from './cluster.js';
import { benchIdle } from './idle.js';
import { benchBacklogJournals, benchBurstJournals } from './journal-compare.js';
import { benchJournalYear } from './journal-year.js';
import { benchLargeFile } from './large-file.js';
import { benchPaced } from './paced.js';
import { type BenchReport, consoleTable, markdown } from './report.js';
import { benchReturnPath, benchReturnPathFlat } from './return-path.js';
import { benchGetJob } from './sandbox-get-job.js';
import { benchSftpAsAgent } from './sftp.js';
import { type BenchPostgres, startBenchPostgres } from './support/bench-postgres.js';
import { buildAgent, removeAgentBuild } from './support/build-agent.js';
import { removeScratchDirs } from './support/scratch.js';
import { machine } from './support/stats.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    files: { type: 'string' },
    concurrency: { type: 'string' },
    rounds: { type: 'string' },
    'service-latency-ms': { type: 'string' },
    'lease-seconds': { type: 'string' },
    'large-mib': { type: 'string' },
    requests: { type: 'string' },
    'get-concurrency': { type: 'string' },
    'sftp-mib': { type: 'string' },
    'sftp-files': { type: 'string' },
    'backlog-files': { type: 'string' },
    'backlog-seconds': { type: 'string' },
    'return-events': { type: 'string' },
    'peppol-docs': { type: 'string' },
    'return-concurrency': { type: 'string' },
    'baseline-docs': { type: 'string' },
    'compare-tuned': { type: 'boolean', default: false },
    'idle-folders': { type: 'string' },
    'idle-settle-seconds': { type: 'string' },
    'idle-window-seconds': { type: 'string' },
    'paced-rate': { type: 'string' },
    'paced-seconds': { type: 'string' },
    'paced-files': { type: 'string' },
    'year-files': { type: 'string' },
    'year-idle-seconds': { type: 'string' },
    only: { type: 'string' },
    'pg-pool-size': { type: 'string' },
    render: { type: 'boolean', default: false },
    merge: { type: 'boolean', default: false },
  },
});
const docs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');
if (values.render) {
  // docs/benchmarks.md again from docs/benchmarks.json (after a change of the report's text).
  const saved = JSON.parse(readFileSync(path.join(docs, 'benchmarks.json'), 'utf8')) as BenchReport;
  writeFileSync(path.join(docs, 'benchmarks.md'), markdown(saved));
  process.stdout.write(`${consoleTable(saved)}\n`);
  process.exit(0);
}
const quick = values.quick;
const num = (flag: string | undefined, env: string, full: number, small: number): number =>
  Number(flag ?? process.env[env] ?? (quick ? small : full));
const files = num(values.files, 'BENCH_FILES', 2000, 200);
const concurrency = num(values.concurrency, 'BENCH_CONCURRENCY', 8, 8);
const rounds = num(values.rounds, 'BENCH_ROUNDS', 3, 1);
const serviceLatencyMs = num(values['service-latency-ms'], 'BENCH_SERVICE_LATENCY_MS', 25, 25);
const leaseSeconds = num(values['lease-seconds'], 'BENCH_LEASE_SECONDS', 15, 6);
const largeMiB = num(values['large-mib'], 'BENCH_LARGE_MIB', 1024, 128);
const requests = num(values.requests, 'BENCH_REQUESTS', 5000, 1000);
const getConcurrency = num(values['get-concurrency'], 'BENCH_GET_CONCURRENCY', 32, 32);
const sftpMiB = num(values['sftp-mib'], 'BENCH_SFTP_MIB', 500, 64);
const sftpFiles = num(values['sftp-files'], 'BENCH_SFTP_FILES', 10_000, 2_000);
const backlogFiles = num(values['backlog-files'], 'BENCH_BACKLOG_FILES', 100_000, 10_000);
const backlogSeconds = num(values['backlog-seconds'], 'BENCH_BACKLOG_SECONDS', 60, 15);
// One size, or several compared in one run ("3000,30000").
const returnEventSizes = (
  values['return-events'] ??
  process.env['BENCH_RETURN_EVENTS'] ??
  (quick ? '500' : '10000')
)
  .split(',')
  .map(Number);
if (returnEventSizes.some((n) => !Number.isInteger(n) || n <= 0)) {
  throw new Error(
    `--return-events: positive whole numbers separated by commas, not ${values['return-events']}`,
  );
}
const returnEvents = returnEventSizes[0] as number;
const peppolDocs = num(values['peppol-docs'], 'BENCH_PEPPOL_DOCS', 10_000, 500);
const returnConcurrency = num(values['return-concurrency'], 'BENCH_RETURN_CONCURRENCY', 8, 8);
const baselineDocs = num(values['baseline-docs'], 'BENCH_BASELINE_DOCS', 2_000, 100);
const idleFolders = num(values['idle-folders'], 'BENCH_IDLE_FOLDERS', 10, 10);
const idleSettleSeconds = num(values['idle-settle-seconds'], 'BENCH_IDLE_SETTLE_SECONDS', 60, 15);
const idleWindowSeconds = num(values['idle-window-seconds'], 'BENCH_IDLE_WINDOW_SECONDS', 60, 10);
const pacedRate = num(values['paced-rate'], 'BENCH_PACED_RATE', 600, 600);
const pacedSeconds = num(values['paced-seconds'], 'BENCH_PACED_SECONDS', 60, 10);
const pacedFiles = num(values['paced-files'], 'BENCH_PACED_FILES', 10_000, 300);
const yearFiles = num(values['year-files'], 'BENCH_YEAR_FILES', 1_000_000, 100_000);
const yearIdleSeconds = num(values['year-idle-seconds'], 'BENCH_YEAR_IDLE_SECONDS', 5, 5);
// As `docex-agent check` asks of a site: a journal connection for every file in flight.
const pgPoolSize = num(values['pg-pool-size'], 'BENCH_PG_POOL_SIZE', concurrency, concurrency);
const only = new Set(
  (
    values.only ??
    'burst,burst-remote,large,get-job,sftp,backlog,return-path,idle,paced,journal-year,burst-pg,burst-remote-pg,backlog-pg,cluster,journal-year-pg'
  ).split(','),
);
const PG_SCENARIOS = ['burst-pg', 'burst-remote-pg', 'backlog-pg', 'cluster', 'journal-year-pg'];
const timeoutMs = 10 * 60_000;

async function attempt<T>(name: string, run: () => Promise<T>): Promise<T | { error: string }> {
  process.stderr.write(`bench: ${name}…\n`);
  try {
    return await run();
  } catch (err) {
    process.stderr.write(`bench: ${name} failed: ${(err as Error).stack}\n`);
    return { error: (err as Error).message };
  }
}

const report: BenchReport = { machine: machine(), quick };
// BENCH_MAIN_JS: an agent built elsewhere (another build of the same tree, an experiment); it is
// neither built nor removed here, so two runs can share the machine without removing each other's.
const givenMainJs = process.env['BENCH_MAIN_JS'];
const mainJs =
  givenMainJs ??
  ([
    'burst',
    'burst-remote',
    'large',
    'backlog',
    'return-path',
    'idle',
    'paced',
    'journal-year',
    ...PG_SCENARIOS,
  ].some((s) => only.has(s))
    ? buildAgent()
    : '');
// One PostgreSQL server for the journal scenarios, started once (a fresh database per agent run).
let postgres: BenchPostgres | undefined;
let postgresError: string | undefined;
const withPostgres = async <T>(run: (pg: BenchPostgres) => Promise<T>): Promise<T> => {
  if (postgresError) throw new Error(postgresError);
  if (!postgres) {
    try {
      postgres = await startBenchPostgres();
    } catch (err) {
      postgresError = `PostgreSQL did not start: ${(err as Error).message.split('\n')[0]}`;
      throw new Error(postgresError);
    }
  }
  return run(postgres);
};
try {
  if (only.has('burst')) {
    report.burst = await attempt(`burst (${files} files, concurrency ${concurrency}, ${rounds} rounds)`, () =>
      benchBurst({ mainJs, files, concurrency, timeoutMs, rounds }),
    );
  }
  if (only.has('burst-remote')) {
    report.burstRemote = await attempt(
      `burst, service ${serviceLatencyMs} ms away (${files} files, concurrency ${concurrency}, ${rounds} rounds)`,
      () => benchBurstRemote({ mainJs, files, concurrency, timeoutMs, rounds, latencyMs: serviceLatencyMs }),
    );
  }
  if (only.has('large')) {
    report.largeFile = await attempt(`large file (${largeMiB} MiB, ${rounds} rounds)`, () =>
      benchLargeFile({ mainJs, bytes: largeMiB * 1024 * 1024, timeoutMs, rounds }),
    );
  }
  if (only.has('get-job')) {
    report.getJob = await attempt(`GET /jobs/{id} (${requests} requests)`, () =>
      benchGetJob(requests, getConcurrency),
    );
  }
  if (only.has('sftp')) {
    report.sftp = await attempt(`sftp (${sftpMiB} MiB download, ${sftpFiles} files listed)`, () =>
      benchSftpAsAgent({ bytes: sftpMiB * 1024 * 1024, files: sftpFiles, rounds: quick ? 1 : 3 }),
    );
  }
  if (only.has('backlog')) {
    report.backlog = await attempt(`backlog (${backlogFiles} files at start-up)`, () =>
      benchBacklog({
        mainJs,
        files: backlogFiles,
        concurrency,
        windowSeconds: backlogSeconds,
        baselineFiles: Math.min(baselineDocs, backlogFiles),
        timeoutMs,
      }),
    );
  }
  if (only.has('return-path') && returnEventSizes.length > 1) {
    report.returnPathFlat = await attempt(
      `return path at ${returnEventSizes.join(', ')} sending events (${peppolDocs} Peppol documents each)`,
      () =>
        benchReturnPathFlat(returnEventSizes, {
          mainJs,
          peppolDocs,
          concurrency: returnConcurrency,
          baselineDocs,
          compareTuned: values['compare-tuned'],
          timeoutMs,
        }),
    );
  } else if (only.has('return-path')) {
    report.returnPath = await attempt(
      `return path (${returnEvents} sending events, ${peppolDocs} Peppol documents)`,
      () =>
        benchReturnPath({
          mainJs,
          events: returnEvents,
          peppolDocs,
          concurrency: returnConcurrency,
          baselineDocs,
          compareTuned: values['compare-tuned'],
          timeoutMs,
        }),
    );
  }
  if (only.has('burst-pg')) {
    report.burstPg = await attempt(
      `burst, PostgreSQL journal beside SQLite (${files} files, concurrency ${concurrency}, pool ${pgPoolSize}, ${rounds} rounds)`,
      () =>
        withPostgres((pg) =>
          benchBurstJournals({
            mainJs,
            files,
            concurrency,
            timeoutMs,
            rounds,
            postgres: pg,
            poolSize: pgPoolSize,
          }),
        ),
    );
  }
  if (only.has('burst-remote-pg')) {
    report.burstRemotePg = await attempt(
      `burst, service ${serviceLatencyMs} ms away, PostgreSQL journal beside SQLite (${files} files, ${rounds} rounds)`,
      () =>
        withPostgres((pg) =>
          benchBurstJournals({
            mainJs,
            files,
            concurrency,
            timeoutMs,
            rounds,
            latencyMs: serviceLatencyMs,
            postgres: pg,
            poolSize: pgPoolSize,
          }),
        ),
    );
  }
  if (only.has('backlog-pg')) {
    report.backlogPg = await attempt(
      `backlog, PostgreSQL journal beside SQLite (${backlogFiles} files at start-up, each)`,
      () =>
        withPostgres((pg) =>
          benchBacklogJournals({
            mainJs,
            files: backlogFiles,
            concurrency,
            windowSeconds: backlogSeconds,
            baselineFiles: 0,
            timeoutMs,
            postgres: pg,
            poolSize: pgPoolSize,
          }),
        ),
    );
  }
  if (only.has('cluster')) {
    report.cluster = await attempt(
      `cluster: two agents against one on one PostgreSQL journal, service ${serviceLatencyMs} ms away (${files} files, ${rounds} rounds), failover with a lease of ${leaseSeconds} s`,
      () =>
        withPostgres((pg) =>
          benchCluster({
            mainJs,
            files,
            concurrency,
            timeoutMs,
            rounds,
            latencyMs: serviceLatencyMs,
            postgres: pg,
            poolSize: pgPoolSize,
            leaseMs: leaseSeconds * 1000,
          }),
        ),
    );
  }
  if (only.has('idle')) {
    report.idle = await attempt(
      `idle (${idleFolders} folders, after ${idleSettleSeconds} s, over ${idleWindowSeconds} s)`,
      () =>
        benchIdle({
          mainJs,
          folders: idleFolders,
          settleSeconds: idleSettleSeconds,
          windowSeconds: idleWindowSeconds,
        }),
    );
  }
  if (only.has('paced')) {
    report.paced = await attempt(
      `paced (pace.rate ${pacedRate}/min over ${pacedSeconds} s; ${pacedFiles} files under a 429 storm)`,
      () =>
        benchPaced({
          mainJs,
          ratePerMinute: pacedRate,
          rateSeconds: pacedSeconds,
          stormFiles: pacedFiles,
          concurrency,
          // The storm's Retry-After burst alone pauses the host 20 s per 1,000 files.
          timeoutMs: 3 * timeoutMs,
        }),
    );
  }
  if (only.has('journal-year')) {
    report.journalYear = await attempt(
      `journal-year (${yearFiles} file items in the journal against an empty journal, RSS ${yearIdleSeconds} s after ready)`,
      () => benchJournalYear({ mainJs, files: yearFiles, idleSeconds: yearIdleSeconds }),
    );
  }
  if (only.has('journal-year-pg')) {
    report.journalYearPg = await attempt(
      `journal-year, PostgreSQL journal (${yearFiles} file items against an empty database, RSS ${yearIdleSeconds} s after ready)`,
      () =>
        withPostgres((postgres) =>
          benchJournalYear({ mainJs, files: yearFiles, idleSeconds: yearIdleSeconds, postgres }),
        ),
    );
  }
} finally {
  await postgres?.stop();
  if (!givenMainJs) removeAgentBuild();
  removeScratchDirs();
}

process.stdout.write(`${consoleTable(report)}\n`);
// The docs hold full runs only: a quick or partial run prints, unless --write.
if ((!quick && values.only === undefined) || values.write) {
  mkdirSync(docs, { recursive: true });
  const jsonFile = path.join(docs, 'benchmarks.json');
  let written = report;
  if (values.merge && existsSync(jsonFile)) {
    const saved = JSON.parse(readFileSync(jsonFile, 'utf8')) as BenchReport;
    const { machine: m, quick: _quick, ...scenarios } = report;
    written = {
      ...saved,
      ...scenarios,
      merged: [
        ...(saved.merged ?? []),
        {
          date: m.date,
          scenarios: Object.keys(scenarios),
          node: m.node,
          loadAverageAtStart: m.loadAverageAtStart,
        },
      ],
    };
  }
  writeFileSync(jsonFile, `${JSON.stringify(written, null, 2)}\n`);
  writeFileSync(path.join(docs, 'benchmarks.md'), markdown(written));
  process.stdout.write('written: docs/benchmarks.md, docs/benchmarks.json\n');
}
const failed = [
  report.burst,
  report.burstRemote,
  report.largeFile,
  report.getJob,
  report.sftp,
  report.backlog,
  report.returnPath,
  report.returnPathFlat,
  report.idle,
  report.paced,
  report.journalYear,
  report.journalYearPg,
  report.burstPg,
  report.burstRemotePg,
  report.backlogPg,
  report.cluster,
].some((r) => r && 'error' in r);
process.exitCode = failed ? 1 : 0;
