/**
 * A year of nights in the journal (issue 30): the agent started on a SQLite journal of N file items
 * (default 1,000,000) as a year with `journal.retention: 90d` leaves it, and on an empty one in
 * the same run; the ratio is what the year costs at start-up.
 *
 * Set-up (not measured): the journal is opened once through the real journal (its migrations run),
 * then filled in one transaction with prepared statements, and the returns store beside it
 * likewise (it is never pruned: a year of followed jobs, one final event and its saved proof each,
 * the feed's cursor at the end). Items older than the retention are as the agent's pruning leaves them: a done
 * file keeps its row without history, a refused one is gone (its id a gap); the last 90 nights
 * keep their history; a handful of files of the last night are unfinished (uploaded, their
 * claimed copy in `.processing/`), which recovery finishes.
 *
 * Measured from the agent's spawn: its "agent started" log line, /readyz answering 200, its CPU
 * time then, peak RSS (VmHWM) and RSS after `idleSeconds` of rest, and the files' sizes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { JOURNAL_FILE } from '../src/config/index.js';
import { silentLogger } from '../src/core/logger.js';
import { deterministicJobName } from '../src/journal/job-name.js';
import { postgresConnection } from '../src/journal/postgres/pool.js';
import { SqliteJournal } from '../src/journal/sqlite-journal.js';
import { FEED_CURSOR } from '../src/returns/follower.js';
import { copyStateToPostgres } from '../src/returns/postgres/copy.js';
import { SqliteReturnsStore } from '../src/returns/sqlite-store.js';
import { RETURNS_FILE } from '../src/returns/store.js';
import { SEED } from '../src/sandbox/seed-ids.js';
import {
  type BenchJournal,
  type BenchPostgres,
  journalSection,
  withClient,
} from './support/bench-postgres.js';
import {
  agentNodeFlags,
  cpuMs,
  type SandboxInfo,
  startSandboxProcess,
  stopChild,
} from './support/processes.js';
import { scratchDir } from './support/scratch.js';
import { agentConfigFile } from './support/service.js';
import { round } from './support/stats.js';

export interface JournalYearOptions {
  mainJs: string;
  /** File items in the journal, pruned ones included. */
  files: number;
  /** Rest after ready before RSS is read. */
  idleSeconds: number;
  /** The journal (and the return path's stores) in a database of this server, not in SQLite files. */
  postgres?: BenchPostgres;
}

export interface StartUpFigures {
  /** Spawn → the "agent started" log line, ms. */
  startedMs: number;
  /** Spawn → /readyz 200, ms. */
  readyMs: number;
  /** CPU (user + system) of the agent when it was ready, ms. */
  cpuAtReadyMs: number | undefined;
  /** VmHWM after the rest, MiB. */
  peakRssMiB: number;
  /** VmRSS after the rest, MiB. */
  idleRssMiB: number;
  /** The first GET /metrics after the rest (its journal totals are read then), ms. */
  firstMetricsMs: number;
  /** VmHWM after that scrape, MiB. */
  peakRssAfterMetricsMiB: number;
  /** journal.sqlite, or the PostgreSQL database (every store in it). */
  journalMiB: number;
  returnsMiB: number;
}

export interface JournalYearResult {
  scenario: 'journal-year';
  journal: 'sqlite' | 'postgres';
  files: number;
  idleSeconds: number;
  /** What the set-up wrote (not measured against anything); the copy to PostgreSQL included. */
  filled: { prunedDone: number; keptDone: number; rejected: number; unfinished: number; history: number };
  fillSeconds: number;
  empty: StartUpFigures;
  year: StartUpFigures;
  /** year / empty. */
  readyRatio: number;
  peakRssRatio: number;
}

export const YEAR_NIGHTS = 365;
export const RETENTION_DAYS = 90;
const DAY_MS = 86_400_000;
const FOLDER = 'year';
/** Files of the last night left unfinished. */
const UNFINISHED = 5;
/** Of the kept nights: one file in 100 refused as a duplicate, one in 500 refused otherwise. */
const DUPLICATE_EVERY = 100;
const REFUSED_EVERY = 500;
const DONE_STEPS = ['claimed', 'validated', 'creating', 'created', 'uploaded', 'done'] as const;

const hex = (i: number, salt: string) => createHash('sha256').update(`${salt}${i}`).digest('hex');
const jobIdOf = (i: number) => {
  const h = hex(i, 'job');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function writeAgentConfig(dir: string, info: SandboxInfo, opsPort: number, journal: BenchJournal): string {
  const configFile = agentConfigFile(dir, info, {
    journal: {
      retention: `${RETENTION_DAYS}d`,
      ...(journalSection(journal)['journal'] as object | undefined),
    },
    log: { level: 'info', format: 'json' },
    ops: { listen: `127.0.0.1:${opsPort}` },
    folders: [
      {
        name: FOLDER,
        source: { type: 'local', path: './in' },
        create: true,
        workflowId: SEED.workflows.pdfEmail,
        archiveDir: './archive',
        errorDir: './error',
      },
    ],
    returns: {
      statuses: { target: { type: 'local', path: './out/statuses' } },
      proofs: { target: { type: 'local', path: './out/proofs' } },
    },
    peppolInbox: { enabled: false },
  });
  return configFile;
}

/**
 * Fills `<dir>/state` with a year of nights ending now: `files` file items in the journal and
 * their followed jobs in the returns store.
 */
export function fillYear(dir: string, files: number, now = Date.now()): JournalYearResult['filled'] {
  const stateDir = path.join(dir, 'state');
  const processing = path.join(dir, 'in', '.processing');
  mkdirSync(processing, { recursive: true });
  const journalFile = path.join(stateDir, JOURNAL_FILE);
  const returnsFile = path.join(stateDir, RETURNS_FILE);
  mkdirSync(stateDir, { recursive: true });
  // The real journal and store create their schemas (migrations), then are closed again.
  void SqliteJournal.open(journalFile, { clock: { now: () => now }, log: silentLogger() }).close();
  void SqliteReturnsStore.open(returnsFile, now).close();

  const filled = { prunedDone: 0, keptDone: 0, rejected: 0, unfinished: 0, history: 0 };
  const journal = new Database(journalFile);
  const returns = new Database(returnsFile);
  // A set-up, not the agent's way of writing: no WAL, no fsync, a large cache. WAL again after.
  for (const db of [journal, returns]) {
    db.pragma('journal_mode = MEMORY');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
  }
  try {
    const insertItem = journal.prepare(
      `INSERT INTO items (id, kind, folder, workflow_id, mode, file_name, source_path, relative_path, claimed_path,
         size, mtime_ms, sha256, state, attempt, job_name, job_id, uploaded_md5, reject_code, reject_reason,
         duplicate_of, created_at, updated_at)
       VALUES (@id, 'file', @folder, @workflowId, 'single-file', @fileName, @sourcePath, @fileName, @claimedPath,
         @size, @mtime, @sha256, @state, @attempt, @jobName, @jobId, @md5, @rejectCode, @rejectReason,
         @duplicateOf, @at, @updatedAt)`,
    );
    const insertHistory = journal.prepare(
      'INSERT INTO history (item_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)',
    );
    const insertSource = returns.prepare(
      `INSERT INTO sources (item_id, folder, file_name, sha256, claimed_at, day, status_path, version, written_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, 2, 2)`,
    );
    const insertJob = returns.prepare(
      `INSERT INTO jobs (job_id, source_id, item_id, job_name, recorded_at, status, next_poll_at, polls, done,
         updated_at) VALUES (?, ?, ?, ?, ?, 'DONE', ?, 3, 1, ?)`,
    );
    const insertEvent = returns.prepare(
      `INSERT INTO events (id, job_id, business_status, status, final_at, final_day, event_json, updated_at)
       VALUES (?, ?, 'DELIVERED', 'FINAL', ?, ?, ?, ?)`,
    );
    const insertProof = returns.prepare(
      `INSERT INTO documents (sending_event_id, file_reference, job_id, type, name, content_type, size, path, state,
         next_try_at, md5, done_at)
       VALUES (?, 'proof', ?, 'PROOF', ?, 'application/pdf', 40000, ?, 'done', ?, ?, ?)`,
    );
    const workflowId = SEED.workflows.pdfEmail;
    const firstNight = now - YEAR_NIGHTS * DAY_MS;
    const keptFrom = now - RETENTION_DAYS * DAY_MS;
    let lastDone = 0;
    const fill = () => {
      // Ids run on over pruned refusals (gaps), so `files` rows remain.
      for (let id = 1, kept = 0; kept < files; id++) {
        // Nights of 02:00-04:00, the files spread evenly over the year.
        const night = Math.floor((id / (files * 1.002)) * YEAR_NIGHTS);
        const at = firstNight + night * DAY_MS + 2 * 3_600_000 + (id % 7200) * 1000;
        const pruned = at < keptFrom;
        const refused = id % REFUSED_EVERY === 0;
        const duplicate = !refused && id % DUPLICATE_EVERY === 0 && lastDone > 0;
        if (pruned && (refused || duplicate)) continue; // a refusal goes whole
        const unfinished = files - kept <= UNFINISHED;
        const fileName = `invoice-${String(id).padStart(7, '0')}.pdf`;
        const sha256 = duplicate ? hex(lastDone, 'content') : hex(id, 'content');
        const sourcePath = path.join(dir, 'in', fileName);
        const claimedPath = path.join(processing, fileName);
        const state = refused || duplicate ? 'rejected' : unfinished ? 'uploaded' : 'done';
        const sent = state !== 'rejected';
        const jobName = sent ? deterministicJobName({ sha256, folder: FOLDER, fileName }) : null;
        const jobId = sent ? jobIdOf(id) : null;
        const updatedAt = at + 4000;
        // Recovery knows an unfinished file's claimed copy by its recorded size and mtime.
        let copy: { size: number; mtimeMs: number } | undefined;
        if (unfinished) {
          writeFileSync(claimedPath, `%PDF-1.4\n% unfinished ${id}\n%%EOF\n`);
          copy = statSync(claimedPath);
        }
        insertItem.run({
          id,
          folder: FOLDER,
          workflowId,
          fileName,
          sourcePath,
          claimedPath,
          size: copy?.size ?? 900 + (id % 500),
          mtime: copy ? Math.trunc(copy.mtimeMs) : at,
          at,
          sha256,
          state,
          attempt: sent ? 1 : 0,
          jobName,
          jobId,
          md5: sent ? hex(id, 'md5').slice(0, 32) : null,
          rejectCode: duplicate ? 'DOCEX_DUPLICATE' : refused ? 'DOCEX_PDF_INVALID' : null,
          rejectReason: duplicate ? `same content as item ${lastDone}` : refused ? 'not a PDF' : null,
          duplicateOf: duplicate ? lastDone : null,
          updatedAt,
        });
        kept++;
        if (state === 'rejected') filled.rejected++;
        else if (unfinished) filled.unfinished++;
        else if (pruned) filled.prunedDone++;
        else filled.keptDone++;
        if (!pruned) {
          const steps = sent ? DONE_STEPS.slice(0, unfinished ? 5 : 6) : (['rejected'] as const);
          steps.forEach((to, i) => {
            const from = i === 0 ? null : DONE_STEPS[i - 1]!;
            const detail = i === 0 ? JSON.stringify({ size: 900, sha256 }) : null;
            insertHistory.run(id, from, to, at + i * 800, detail);
            filled.history++;
          });
        }
        if (sent && !unfinished) {
          lastDone = id;
          // Followed once done: a status file written, the job final with one delivered event.
          const day = isoDay(at);
          insertSource.run(id, FOLDER, fileName, sha256, at, day, `${day}/${fileName}.${id}.json`);
          insertJob.run(jobId, id, id, jobName, updatedAt, updatedAt + 60_000, updatedAt + 3_600_000);
          const eventId = hex(id, 'event').slice(0, 32);
          const final = updatedAt + 1_800_000;
          insertEvent.run(
            eventId,
            jobId,
            final,
            isoDay(final),
            JSON.stringify({ id: eventId, jobId }),
            final,
          );
          // Its delivery proof, saved.
          const proof = `proof-${fileName}`;
          insertProof.run(
            eventId,
            jobId,
            proof,
            `${day}/${proof}`,
            final,
            hex(id, 'proof').slice(0, 32),
            final,
          );
        }
      }
    };
    // One transaction in each file: the returns store's rows are written beside the journal's.
    returns.transaction(() => journal.transaction(fill)())();
    // The feed has read every done of the journal; the daily CSVs are written.
    const maxHistory = journal.prepare('SELECT max(id) AS id FROM history').get() as { id: number | null };
    returns
      .prepare('INSERT INTO meta (key, value) VALUES (?, ?)')
      .run(FEED_CURSOR, String(maxHistory.id ?? 0));
    returns.exec(
      `INSERT INTO csv_days (day, rows, written_at)
       SELECT final_day, count(*), ${now} FROM events GROUP BY final_day`,
    );
    for (const db of [journal, returns]) db.pragma('journal_mode = WAL');
  } finally {
    journal.close();
    returns.close();
  }
  // Written without fsync: flushed here, or the agent's first checkpoint would flush it all.
  for (const file of [journalFile, returnsFile]) {
    const fd = openSync(file, 'r');
    fsyncSync(fd);
    closeSync(fd);
  }
  return filled;
}

const freePort = async (): Promise<number> => {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procStatusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no ${field} for ${pid}`);
  return Number(m[1]) / 1024;
}

const fileMiB = (file: string) => {
  try {
    return round(statSync(file).size / 1024 / 1024, 1);
  } catch {
    return 0;
  }
};

/** Spawn → the first log line with this message, ms (its stdout is a JSON log). */
function logLineAt(child: ChildProcess, spawnedAt: number, msg: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!line.includes(`"msg":"${msg}"`)) return;
      resolve(performance.now() - spawnedAt);
      lines.removeAllListeners('line');
      child.stdout!.resume();
    });
    child.once('exit', (code) => reject(new Error(`agent exited (${code}) before "${msg}"`)));
  });
}

async function readyAt(child: ChildProcess, spawnedAt: number, opsPort: number, timeoutMs: number) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`agent exited early (${child.exitCode})`);
    const status = await fetch(`http://127.0.0.1:${opsPort}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return performance.now() - spawnedAt;
    if (performance.now() - spawnedAt > timeoutMs) throw new Error(`agent not ready within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** One start of the agent on `dir` (its state as it is), measured. */
async function measureStart(
  dir: string,
  info: SandboxInfo,
  options: JournalYearOptions,
  journal: BenchJournal,
): Promise<StartUpFigures> {
  const opsPort = await freePort();
  const configFile = writeAgentConfig(dir, info, opsPort, journal);
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [...agentNodeFlags(), options.mainJs, 'start', '--config', configFile],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const started = logLineAt(child, spawnedAt, 'agent started');
    const readyMs = await readyAt(child, spawnedAt, opsPort, 5 * 60_000);
    const cpuAtReadyMs = cpuMs(child.pid);
    const startedMs = await started;
    await sleep(options.idleSeconds * 1000);
    const stateDir = path.join(dir, 'state');
    const peakRssMiB = round(procStatusMiB(child.pid!, 'VmHWM'), 1);
    const idleRssMiB = round(procStatusMiB(child.pid!, 'VmRSS'), 1);
    const scrapeAt = performance.now();
    const metrics = await fetch(`http://127.0.0.1:${opsPort}/metrics`);
    await metrics.text();
    if (metrics.status !== 200) throw new Error(`GET /metrics answered ${metrics.status}`);
    return {
      startedMs: Math.round(startedMs),
      readyMs: Math.round(readyMs),
      cpuAtReadyMs,
      peakRssMiB,
      idleRssMiB,
      firstMetricsMs: Math.round(performance.now() - scrapeAt),
      peakRssAfterMetricsMiB: round(procStatusMiB(child.pid!, 'VmHWM'), 1),
      journalMiB:
        journal.kind === 'postgres'
          ? await withClient(journal.url, async (c) => {
              const { rows } = await c.query('SELECT pg_database_size(current_database()) AS n');
              return round(Number(rows[0].n) / 1024 / 1024, 1);
            })
          : fileMiB(path.join(stateDir, JOURNAL_FILE)),
      returnsMiB: journal.kind === 'postgres' ? 0 : fileMiB(path.join(stateDir, RETURNS_FILE)),
    };
  } finally {
    await stopChild(child);
  }
}

export async function benchJournalYear(options: JournalYearOptions): Promise<JournalYearResult> {
  const dir = scratchDir('docex-bench-journal-year-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const pg = options.postgres;
    const freshJournal = async (): Promise<BenchJournal> =>
      pg ? { kind: 'postgres', url: await pg.createDatabase() } : { kind: 'sqlite' };
    // A first start warms the page cache (node, the build, the sandbox's TLS): not measured.
    const warmDir = path.join(dir, 'warm-up');
    mkdirSync(warmDir, { recursive: true });
    await measureStart(warmDir, sandbox.info, { ...options, idleSeconds: 0 }, await freshJournal());
    const emptyDir = path.join(dir, 'empty');
    mkdirSync(emptyDir, { recursive: true });
    const empty = await measureStart(emptyDir, sandbox.info, options, await freshJournal());
    const yearDir = path.join(dir, 'year');
    const t = performance.now();
    const filled = fillYear(yearDir, options.files);
    const yearJournal = await freshJournal();
    if (yearJournal.kind === 'postgres') {
      // As an operator moves a SQLite agent's state: `journal copy`, then the files set aside.
      const stateDir = path.join(yearDir, 'state');
      const files = [JOURNAL_FILE, RETURNS_FILE, 'inbox.sqlite'].map((f) => path.join(stateDir, f));
      await copyStateToPostgres({
        stateDir,
        sources: { journal: files[0]!, returns: files[1]!, inbox: files[2]! },
        connection: postgresConnection(yearJournal.url, { tls: { mode: 'disable' } }),
      });
      for (const file of files.slice(0, 2)) renameSync(file, `${file}.copied`);
    }
    const fillSeconds = round((performance.now() - t) / 1000, 1);
    const year = await measureStart(yearDir, sandbox.info, options, yearJournal);
    return {
      scenario: 'journal-year',
      journal: pg ? 'postgres' : 'sqlite',
      files: options.files,
      idleSeconds: options.idleSeconds,
      filled,
      fillSeconds,
      empty,
      year,
      readyRatio: round(year.readyMs / empty.readyMs, 2),
      peakRssRatio: round(year.peakRssMiB / empty.peakRssMiB, 2),
    };
  } finally {
    await sandbox.stop();
  }
}
