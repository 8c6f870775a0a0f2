/**
 * `npm run bench [-- options]`: the benchmark scenarios in a row, a table on stdout, and (full run)
 * docs/benchmarks.md and docs/benchmarks.json (a full run of every scenario, or --write).
 *   --quick                 small sizes (about a minute), prints only unless --write
 *   --files N --concurrency C        burst (default 2000, 8)
 *   --large-mib M                    large file (default 1024)
 *   --requests N --get-concurrency C GET /jobs/{id} (default 5000, 32)
 *   --only burst,large,get-job       a subset
 *   --render                         rewrite docs/benchmarks.md from docs/benchmarks.json
 * The same options can be given as BENCH_FILES, BENCH_CONCURRENCY, BENCH_LARGE_MIB, BENCH_REQUESTS.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchBurst } from './burst.js';
import { benchLargeFile } from './large-file.js';
import { type BenchReport, consoleTable, markdown } from './report.js';
import { benchGetJob } from './sandbox-get-job.js';
import { buildAgent, removeAgentBuild } from './support/build-agent.js';
import { machine } from './support/stats.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    files: { type: 'string' },
    concurrency: { type: 'string' },
    'large-mib': { type: 'string' },
    requests: { type: 'string' },
    'get-concurrency': { type: 'string' },
    only: { type: 'string' },
    render: { type: 'boolean', default: false },
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
const largeMiB = num(values['large-mib'], 'BENCH_LARGE_MIB', 1024, 128);
const requests = num(values.requests, 'BENCH_REQUESTS', 5000, 1000);
const getConcurrency = num(values['get-concurrency'], 'BENCH_GET_CONCURRENCY', 32, 32);
const only = new Set((values.only ?? 'burst,large,get-job').split(','));
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
const mainJs = only.has('burst') || only.has('large') ? buildAgent() : '';
try {
  if (only.has('burst')) {
    report.burst = await attempt(`burst (${files} files, concurrency ${concurrency})`, () =>
      benchBurst({ mainJs, files, concurrency, timeoutMs }),
    );
  }
  if (only.has('large')) {
    report.largeFile = await attempt(`large file (${largeMiB} MiB)`, () =>
      benchLargeFile({ mainJs, bytes: largeMiB * 1024 * 1024, timeoutMs }),
    );
  }
  if (only.has('get-job')) {
    report.getJob = await attempt(`GET /jobs/{id} (${requests} requests)`, () =>
      benchGetJob(requests, getConcurrency),
    );
  }
} finally {
  removeAgentBuild();
}

process.stdout.write(`${consoleTable(report)}\n`);
// The docs hold full runs only: a quick or partial run prints, unless --write.
if ((!quick && values.only === undefined) || values.write) {
  mkdirSync(docs, { recursive: true });
  writeFileSync(path.join(docs, 'benchmarks.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(docs, 'benchmarks.md'), markdown(report));
  process.stdout.write('written: docs/benchmarks.md, docs/benchmarks.json\n');
}
const failed = [report.burst, report.largeFile, report.getJob].some((r) => r && 'error' in r);
process.exitCode = failed ? 1 : 0;
