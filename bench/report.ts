/** Pure rendering of a benchmark run: a console table and docs/benchmarks.md. */
import type { BacklogResult } from './backlog.js';
import {
  BACKLOG_RETURN_NOTES,
  backlogReturnFigures,
  backlogRows,
  returnPathRows,
} from './backlog-returns-report.js';
import type { BurstRemoteResult, BurstResult } from './burst.js';
import type { LargeFileResult } from './large-file.js';
import type { ReturnPathResult } from './return-path.js';
import type { GetJobResult } from './sandbox-get-job.js';
import type { SftpBenchResult } from './sftp.js';
import { SFTP_NOTES, sftpRows, sftpTargets } from './sftp-report.js';
import type { Machine } from './support/stats.js';

export interface BenchReport {
  machine: Machine;
  quick: boolean;
  burst?: BurstResult | { error: string };
  burstRemote?: BurstRemoteResult | { error: string };
  largeFile?: LargeFileResult | { error: string };
  getJob?: GetJobResult | { error: string };
  sftp?: SftpBenchResult | { error: string };
  backlog?: BacklogResult | { error: string };
  returnPath?: ReturnPathResult | { error: string };
  /** Scenarios run again later and merged in (`--write --merge`). */
  merged?: { date: string; scenarios: string[] }[];
}

const isError = (r: object | undefined): r is { error: string } => r !== undefined && 'error' in r;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** Rows of [scenario, column, figure, p50, p95, ratio]. */
export function rows(report: BenchReport): string[][] {
  const out: string[][] = [['scenario', 'column', 'throughput', 'p50 ms', 'p95 ms', 'ratio / target']];
  const b = report.burst;
  if (isError(b)) out.push(['burst', 'failed', b.error, '', '', '']);
  else if (b) {
    const name = `burst ${b.files} × ${b.pdfBytes} B, c=${b.concurrency}`;
    // Service-side CPU per file beside each column: the three share one sandbox on the same cores.
    const rate = (c: BurstResult['curl']) =>
      `${c.filesPerSecond} files/s${c.sandboxCpuMsPerFile === undefined ? '' : ` (sandbox ${c.sandboxCpuMsPerFile} ms CPU/file)`}`;
    out.push([
      name,
      'agent (own process)',
      rate(b.agent),
      `${b.agent.p50Ms}`,
      `${b.agent.p95Ms}`,
      `peak RSS ${b.agent.peakRssMiB ?? '?'} MiB${b.agent.cpuMsPerFile === undefined ? '' : `, agent ${b.agent.cpuMsPerFile} ms CPU/file`}`,
    ]);
    out.push([
      name,
      b.curl.column,
      rate(b.curl),
      `${b.curl.p50Ms}`,
      `${b.curl.p95Ms}`,
      `agent ${b.agentVsCurl}× (target ≥ 10×)`,
    ]);
    out.push([
      name,
      b.ceiling.column,
      rate(b.ceiling),
      `${b.ceiling.p50Ms}`,
      `${b.ceiling.p95Ms}`,
      `agent ${b.agentVsCeiling}× (target ≥ 0.5×)`,
    ]);
  }
  const r = report.burstRemote;
  if (isError(r)) out.push(['burst, remote service', 'failed', r.error, '', '', '']);
  else if (r) {
    const name = `burst ${r.files}, service +${r.latencyMs} ms per call, c=${r.concurrency}`;
    out.push([
      name,
      'agent (own process)',
      `${r.agent.filesPerSecond} files/s`,
      `${r.agent.p50Ms}`,
      `${r.agent.p95Ms}`,
      `agent ${r.agentVsCeiling}× the ceiling`,
    ]);
    out.push([
      name,
      r.ceiling.column,
      `${r.ceiling.filesPerSecond} files/s`,
      `${r.ceiling.p50Ms}`,
      `${r.ceiling.p95Ms}`,
      '',
    ]);
  }
  const l = report.largeFile;
  if (isError(l)) out.push(['large file', 'failed', l.error, '', '', '']);
  else if (l) {
    const name = `large file ${mib(l.bytes)}`;
    out.push([
      name,
      'agent drop→uploaded',
      `${l.agentDropToUploadedMiBps} MiB/s`,
      '',
      '',
      `${l.agentVsCurl}× curl (target ≥ 0.9×)`,
    ]);
    out.push([name, 'agent PUT only', `${l.agentPutMiBps} MiB/s`, '', '', `${l.agentPutVsCurl}× curl`]);
    out.push([name, 'curl -T', `${l.curlMiBps} MiB/s`, '', '', '']);
    out.push([name, 'agent peak RSS', `${l.agentPeakRssMiB ?? '?'} MiB`, '', '', 'target < 150 MB']);
  }
  const g = report.getJob;
  if (isError(g)) out.push(['GET /jobs/{id}', 'failed', g.error, '', '', '']);
  else if (g) {
    out.push([
      `GET /jobs/{id} × ${g.requests}, c=${g.concurrency}`,
      'DocexClient (in-process sandbox)',
      `${g.requestsPerSecond} req/s`,
      `${g.p50Ms}`,
      `${g.p95Ms}`,
      '',
    ]);
  }
  out.push(...sftpRows(report.sftp));
  out.push(...backlogRows(report.backlog), ...returnPathRows(report.returnPath));
  return out;
}

export function consoleTable(report: BenchReport): string {
  const table = rows(report);
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
  return table
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const LIMITS = `## What limits these figures
- One machine: the agent, the sandbox (its own process) and the load generators share the same
  cores, and other processes (other builds and test runs) may be running; the load average at the
  start is shown above. Absolute figures move by ±30 % between runs; the ratios of one run are
  the meaningful part, since its columns ran minutes apart against the same sandbox process.
- The sandbox is the counterpart of every column. Its clock is frozen for the benchmark, so the
  emulated service's later work (sending-event lifecycle, proof PDFs) does not run; it still checks
  every token, records every job, writes and fsyncs every upload, and parses every PDF.
- Burst: the agent's folder uses the rename-in rule (no settle wait; the default 2 s stat-loop rule
  adds the settle time to every file's latency, not to throughput). The agent also hashes (SHA-256)
  and inspects each file, records six journal moves (two of them waited for on disk, through a shared fsync) and archives each file
  with its result record; the two scripts only create and PUT. For the scripts every file counts as
  dropped when the run starts.
- Large file: a sparse file, read once before each column (as a file an ERP just wrote sits in the
  page cache; the first reader of a sparse file zero-fills its page cache, about 3 s for 1 GiB here),
  with dirty pages flushed between columns; the sandbox writes and fsyncs the real bytes, which
  bounds both columns and makes the ratio move by ±0.1 between runs. The agent reads the file twice
  (SHA-256 at the claim, about 1 s, then the streamed PUT with its MD5); "PUT only" is the
  journal's created → uploaded time.
- Peak RSS during the large file: the agent idles at about 105 MiB (54 MiB of it the node binary
  and libraries). The SHA-256 reads into one reused buffer (a read stream's fresh chunks raised the
  resident set by 30–40 MiB until V8 collected them); the PUT streams 64 KiB chunks, whose garbage
  still lifts it by up to about 35 MiB (16 KiB chunks saved 2–3 MiB and cost 10–15 % of the PUT's
  speed). Start-up peaks at about 138 MiB while the first Peppol documents are saved: another
  thread's malloc arena grows by about 27 MiB and is freed right after (V8's background compiler,
  most likely; not pinned down).
- Peak RSS is VmHWM of the agent process (compiled JavaScript, as installed), read before it stops.
  The agent runs with the launchers' Node flags (src/ops/node-flags.ts: \`--max-semi-space-size=4
  --single-threaded-gc\`; the SFTP scenario runs in a process with them too);
  with V8's default 16 MiB semi-spaces the 1 GiB run peaked at 158–164 MiB (heap total 58 MiB for
  22 MiB used, against 33 MiB). Commands load their modules on demand (ssh2 with the first SFTP
  connection); the return path and the Peppol inbox are on, as by default.
- The targets were set against a bare local HTTPS server (curl per file ≈ 90/s, keep-alive ≈
  4,700/s). Against this sandbox the curl script (two curls and a jq per file) made 9–33/s and the
  ceiling 370–560/s on the machines this ran on. Process start-up, which the script pays three
  times per file, varies most between machines: 9/s on the machine of the table above, 33/s on
  the one of the run before (where the agent made 174 files/s, against 97–118 here). So "10× curl"
  asked for 25–60 % of the ceiling, depending on the machine.

## Where the agent's time goes (CPU profile of the agent process during the burst)
Before this work the journal took about 30 % of the agent's busy time (1.5 s of 5.3 s for 200
files): six transactions per file, each
with synchronous=FULL, plus a TRUNCATE checkpoint after every upload. Now the moves the agent acts
on next ("created" before the PUT, "uploaded" before the archive) commit NORMAL and share one fsync
of the WAL off the event loop (group commit), the URL scrub is one checkpoint per second of uploads,
and TLS contexts are built once per agent instead of once per connection: the journal is about
10 % of the agent's CPU. What remains is spread thin: about 25 file-system calls per file (claim
rename, SHA-256 read, inspection, the result record written with fsync, the archive rename), the
HTTP client, and about 25 % idle time waiting for the sandbox.

The burst is CPU-bound on two cores: during it the machine is about 85 % busy (vmstat: 53 % user,
30 % system), the agent spending about 9 ms of CPU per file and the sandbox 5.5–6, where the
ceiling client costs the sandbox 3.5 and almost nothing itself. Holding a slot only for the service
calls (the checks and the archive of other files running beside them, four files in process per
slot) was tried and measured: 100–112 files/s against 101–110 before on loopback, and 79.5 against
84 with the service 25 ms away, so it was not kept. That second setting is the burst-remote
scenario (\`npm run bench -- --only burst-remote\`): with a service that is not on the same two cores
the agent made 84–91 files/s against the ceiling's 126–127, 0.66–0.72×.
`;

/** Each target of issue 3 with the figure of this run. */
export function targets(report: BenchReport): string[] {
  const out: string[] = [];
  const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const b = report.burst;
  if (b && !isError(b)) {
    out.push(`Burst ≥ 10× the curl script: ${b.agentVsCurl}× — ${mark(b.agentVsCurl >= 10)}.`);
    out.push(`Burst ≥ 0.5× the keep-alive ceiling: ${b.agentVsCeiling}× — ${mark(b.agentVsCeiling >= 0.5)}.`);
  }
  const l = report.largeFile;
  if (l && !isError(l)) {
    out.push(
      `Large file ≥ 0.9× curl -T: drop→uploaded ${l.agentVsCurl}× — ${mark(l.agentVsCurl >= 0.9)}; ` +
        `the PUT alone ${l.agentPutVsCurl}× — ${mark(l.agentPutVsCurl >= 0.9)}.`,
    );
    const mb = l.agentPeakRssMiB === undefined ? undefined : (l.agentPeakRssMiB * 1024 * 1024) / 1e6;
    out.push(
      `Agent peak RSS < 150 MB during the large file: ${mb === undefined ? '?' : mb.toFixed(1)} MB ` +
        `(${l.agentPeakRssMiB ?? '?'} MiB) — ${mark(mb !== undefined && mb < 150)}.`,
    );
  }
  out.push(...sftpTargets(report.sftp));
  out.push(...backlogReturnFigures(report.backlog, report.returnPath));
  return out;
}

export function markdown(report: BenchReport): string {
  const m = report.machine;
  const table = rows(report);
  const md = [
    '# Benchmarks',
    '',
    'Produced by `npm run bench` (bench/run.ts); `npm run bench -- --quick` is a one-minute smoke run',
    'that prints only. Raw figures: [benchmarks.json](benchmarks.json).',
    '',
    `- Date: ${m.date}`,
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}`,
    `- Node ${m.node}; load average at start ${m.loadAverageAtStart.join(' / ')}`,
    ...(report.merged ?? []).map((r) => `- Run again on ${r.date} and merged in: ${r.scenarios.join(', ')}`),
    '',
    `| ${table[0]!.join(' | ')} |`,
    `|${table[0]!.map(() => '---').join('|')}|`,
    // A `|` inside a cell (a shell pipeline) would start a new column.
    ...table.slice(1).map((r) => `| ${r.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`),
    '',
    '## Targets (issue 3)',
    ...targets(report).map((t) => `- ${t}`),
    '',
    LIMITS,
    ...(report.sftp ? [SFTP_NOTES] : []),
    ...(report.backlog || report.returnPath ? [BACKLOG_RETURN_NOTES] : []),
  ];
  return md.join('\n');
}
