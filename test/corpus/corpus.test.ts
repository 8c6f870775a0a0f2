/**
 * The bad-input corpus against one real agent process (issue 7): the sandbox over HTTPS + mTLS, the
 * agent started by the CLI's start runner in a child process (so its memory is its own), the whole
 * table of corpus.ts dropped at once. Then, per case: refused into the error folder with the exact
 * code, a .error.json and a readable .error.txt, and no job; or archived with exactly its job(s) in
 * the sandbox. Afterwards the agent still takes a good file, and its peak RSS stayed bounded.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { fitName } from '../../src/pipeline/place-file.js';
import { validPdf } from '../fixtures/inputs/hostile.js';
import { md5, type SandboxJob } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { type AgentProcess, spawnAgent, writeAgentConfig } from '../support/agent-process.js';
import {
  BOMB_BYTES,
  CORPUS,
  CORPUS_FOLDERS,
  CORPUS_MAX_FILE_BYTES,
  type CorpusCase,
  type CorpusFolderName,
  expectedText,
  MAX_PEAK_RSS_MIB,
  NOT_ENTERED,
  put,
  type RefusedRow,
} from './corpus.js';

const MAX_PEAK_RSS_BYTES = MAX_PEAK_RSS_MIB * 1024 * 1024;
const SETTLE_TIMEOUT_MS = 90_000;
/** DOCEX_CORPUS_ONLY=<regex> drops only the cases whose name matches (debugging; "^$" = none: the baseline RSS). */
const ONLY = process.env['DOCEX_CORPUS_ONLY'];
const CASES = ONLY === undefined ? CORPUS : CORPUS.filter((c) => new RegExp(ONLY, 'i').test(c.name));

let dir: string;
let sandbox: TestSandbox;
let agent: AgentProcess | undefined;
let jobs: SandboxJob[] = [];
let peakRssBytes = 0;
let livenessArchived = false;
let exitCode: number | null = null;
const secretPath = () => path.join(dir, 'outside', 'secret.pdf');

const dropDir = (folder: CorpusFolderName) => path.join(dir, 'in', folder);
const errorDir = (folder: CorpusFolderName) => path.join(dir, 'error', folder);
const archiveDir = (folder: CorpusFolderName) => path.join(dir, 'archive', folder);

/** A case's sub-folders (in the recursive `tree` folder) and its own name. */
function splitFile(file: string): { sub: string[]; name: string } {
  const segments = file.split('/');
  return { sub: segments.slice(0, -1), name: segments[segments.length - 1]! };
}

/** `archive/<folder>/<sub-path>/<day>/<file>` under any day (a run may cross midnight UTC). */
function archivedPath(folder: CorpusFolderName, file: string): string | undefined {
  const { sub, name } = splitFile(file);
  const root = path.join(archiveDir(folder), ...sub);
  if (!existsSync(root)) return undefined;
  for (const day of readdirSync(root)) {
    // A name too long for its side files is placed shortened (place-file.ts fitName).
    const p = path.join(root, day, fitName(name, '.result.json'.length));
    if (existsSync(`${p}.result.json`)) return p;
  }
  return undefined;
}

/** The warnings the agent logged about sub-folders it does not enter, by the sub-folder they name. */
const warnedFolders = () =>
  new Set((agent?.records ?? []).filter((r) => r['msg'] === NOT_ENTERED).map((r) => String(r['file'])));

function outcomeOf(c: CorpusCase): 'archived' | 'error' | 'left' | undefined {
  const { sub, name } = splitFile(c.file);
  if (existsSync(path.join(errorDir(c.folder), ...sub, `${fitName(name, '.error.json'.length)}.error.json`)))
    return 'error';
  if (archivedPath(c.folder, c.file)) return 'archived';
  // Left alone: said once when a warning is owed (the rest of the tree is taken by then).
  if (c.expected.outcome === 'left' && isIn(dropDir(c.folder), c)) {
    const { warned } = c.expected;
    return warned === undefined || warnedFolders().has(warned) ? 'left' : undefined;
  }
  return undefined;
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end || exitCode !== null) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** Starts the agent; resolves once it logged its start, rejects when it exited before. */
function startAgent(configFile: string): Promise<void> {
  const started = spawnAgent(configFile);
  agent = started;
  void started.exited.then(({ code }) => {
    exitCode = code ?? -1;
  });
  return Promise.race([
    started.logged('agent started'),
    started.exited.then(() => {
      throw new Error(`agent exited early:\n${started.tail.join('\n')}`);
    }),
  ]);
}

function vmHwmBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  return kib === undefined ? 0 : Number(kib) * 1024;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-corpus-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
  mkdirSync(path.join(dir, 'outside'), { recursive: true });
  const names = Object.keys(CORPUS_FOLDERS) as CorpusFolderName[];
  for (const name of names) mkdirSync(dropDir(name), { recursive: true });
  const configFile = writeAgentConfig(dir, sandbox, {
    concurrency: 4,
    maxFileBytes: CORPUS_MAX_FILE_BYTES,
    shutdownGraceMs: '2s',
    log: { level: 'info', format: 'json' },
    folders: names.map((name) => ({
      name,
      source: { type: 'local', path: `./in/${name}` },
      workflowId: CORPUS_FOLDERS[name].workflowId,
      ...(CORPUS_FOLDERS[name].mode ? { mode: CORPUS_FOLDERS[name].mode } : {}),
      ...(CORPUS_FOLDERS[name].onInvalidRow ? { onInvalidRow: CORPUS_FOLDERS[name].onInvalidRow } : {}),
      ...(CORPUS_FOLDERS[name].recursive ? { recursive: true } : {}),
      archiveDir: `./archive/${name}`,
      errorDir: `./error/${name}`,
      stability: { kind: 'rename-in' },
    })),
  });
  await startAgent(configFile);

  const ctx = { folderPath: dropDir, outside: path.join(dir, 'outside') };
  const dropStart = Date.now();
  for (const c of CASES) await c.write(path.join(dropDir(c.folder), c.file), ctx);

  const dropped = Date.now();
  await until(() => CASES.every((c) => outcomeOf(c) !== undefined), SETTLE_TIMEOUT_MS);
  const settledAt = Date.now();

  // Still alive and still working: a good file dropped after the corpus goes through.
  await put(path.join(dropDir('pdf'), 'after-the-corpus.pdf'), await validPdf(1, 'after the corpus'));
  livenessArchived = await until(() => archivedPath('pdf', 'after-the-corpus.pdf') !== undefined, 20_000);
  if (exitCode === null && agent?.child.pid) peakRssBytes = vmHwmBytes(agent.child.pid);
  jobs = (await sandbox.control('GET', '/jobs')).body.items as SandboxJob[];
  if (process.env['DOCEX_CORPUS_VERBOSE']) {
    for (const c of CASES) {
      const base = path.join(errorDir(c.folder), c.file);
      const reason = existsSync(`${base}.error.json`)
        ? JSON.parse(readFileSync(`${base}.error.json`, 'utf8')).reason
        : '';
      process.stdout.write(`${c.name}: ${outcomeOf(c) ?? 'no outcome'} ${reason}\n`);
    }
    process.stdout.write(
      `corpus: written in ${dropped - dropStart} ms, all cases placed ${settledAt - dropped} ms later\n`,
    );
  }
}, 180_000);

/** Is the case's file in `dir`? By its raw bytes when its name is not UTF-8. */
function isIn(dir: string, c: CorpusCase): boolean {
  if (c.nameBytes === undefined) return existsOrLink(path.join(dir, c.file));
  return existsOrLink(Buffer.concat([Buffer.from(`${dir}${path.sep}`), c.nameBytes]));
}

function existsOrLink(p: string | Buffer): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

afterAll(async () => {
  if (agent && exitCode === null) {
    agent.child.kill('SIGTERM');
    await agent.exited;
  }
  await sandbox?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

const context = () => `last agent lines:\n${agent?.tail.slice(-30).join('\n')}`;

function checkArchived(c: CorpusCase, jobCount: number, refused: readonly RefusedRow[] = []): void {
  const placed = archivedPath(c.folder, c.file);
  expect(placed, `no ${c.file}.result.json in the archive (outcome: ${outcomeOf(c)})`).toBeDefined();
  const result = JSON.parse(readFileSync(`${placed}.result.json`, 'utf8')) as {
    jobId?: string;
    file: string;
    rows?: Array<{ label?: string; state: string; jobId?: string; code?: string; reason?: string }>;
    report?: string;
  };
  // Its own name: a recursive folder's sub-path is kept by where the record lies.
  expect(result.file).toBe(splitFile(c.file).name);
  // Rows refused on their own (onInvalidRow: skip): named with their code, in the report too.
  const rejected = (result.rows ?? []).filter((r) => r.state === 'rejected');
  expect(rejected.map((r) => ({ label: r.label, code: r.code }))).toEqual(refused);
  for (const r of refused) expect(result.report).toContain(`${r.label}: ${r.code}`);
  // Named by field and code point (or key), never by the hostile value; an execution date by the
  // rule it breaks.
  for (const r of rejected)
    expect(r.reason).toMatch(
      /holds .*U\+[0-9A-F]{4}|appears more than once|is not a date-time with its offset|is not later than/,
    );
  const sent = (result.rows ?? []).filter((r) => r.state !== 'rejected');
  const ids = result.rows ? sent.map((r) => r.jobId) : [result.jobId];
  expect(ids).toHaveLength(jobCount);
  const data = readFileSync(placed!);
  for (const id of ids) {
    const matching = jobs.filter((j) => j.id === id);
    expect(matching, `job ${id} in the sandbox`).toHaveLength(1);
    // Single-file and payload-pdf jobs carry the file itself; payload-word rows carry no upload.
    if (CORPUS_FOLDERS[c.folder].mode !== 'payload-word') {
      expect(matching[0]!.uploadedMd5).toBe(md5(data));
    }
  }
  expect(existsSync(path.join(errorDir(c.folder), `${c.file}.error.json`))).toBe(false);
}

function checkRefused(c: CorpusCase, code: string): void {
  const base = path.join(errorDir(c.folder), c.file);
  expect(existsSync(`${base}.error.json`), `no ${c.file}.error.json (outcome: ${outcomeOf(c)})`).toBe(true);
  // lstat: a refused link or FIFO is moved as it is, never followed.
  expect(() => lstatSync(base), 'the file itself sits in the error folder').not.toThrow();
  const record = JSON.parse(readFileSync(`${base}.error.json`, 'utf8')) as Record<string, unknown>;
  expect(record).toMatchObject({ status: 'rejected', file: splitFile(c.file).name, folder: c.folder, code });
  const reason = String(record['reason']);
  expect(reason.length).toBeGreaterThan(10);
  // A reason for an operator, not a JavaScript error leaking through.
  expect(reason).not.toMatch(/Cannot read properties|is not a function|TypeError|RangeError|\bundefined\b/);
  const text = readFileSync(`${base}.error.txt`, 'utf8');
  expect(text).toContain('was not sent.');
  expect(text).toContain(`Code:   ${code}`);
  expect(text).toContain(reason);
  expect(archivedPath(c.folder, c.file)).toBeUndefined();
}

/** Left where it was dropped, unread: no job of its bytes, no record of it, said once if owed. */
function checkLeft(c: CorpusCase, warned: string | undefined): void {
  expect(isIn(dropDir(c.folder), c), 'the file is still in the drop folder').toBe(true);
  const at = path.join(dropDir(c.folder), c.file);
  const bytes = readFileSync(
    c.nameBytes ? Buffer.concat([Buffer.from(`${dropDir(c.folder)}/`), c.nameBytes]) : at,
  );
  expect(jobs.filter((j) => j.uploadedMd5 === md5(bytes))).toEqual([]);
  expect(outcomeOf(c)).toBe('left');
  if (warned !== undefined) {
    const warnings = (agent?.records ?? []).filter((r) => r['msg'] === NOT_ENTERED && r['file'] === warned);
    // Once, however many rescans ran: no warning loop.
    expect(warnings, context()).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ folder: c.folder });
  }
}

function check(c: CorpusCase): void {
  if (c.expected.outcome === 'left') {
    checkLeft(c, c.expected.warned);
    return;
  }
  if (c.expected.outcome === 'archived') checkArchived(c, c.expected.jobs, c.expected.refused);
  else checkRefused(c, c.expected.code);
  expect(isIn(dropDir(c.folder), c), 'the file is still in the drop folder').toBe(false);
}

const table = CASES.map((c) => ({ ...c, expectedAs: expectedText(c.expected) }));

describe('the bad-input corpus dropped on one running agent', () => {
  it.each(table)('$name ends in $expectedAs', (c) => {
    check(c);
  });

  it('creates no job for a refused file: the sandbox holds only the archived cases’ jobs', () => {
    const wanted = CASES.reduce((n, c) => n + (c.expected.outcome === 'archived' ? c.expected.jobs : 0), 0);
    // + 1: the good file dropped after the corpus.
    expect(jobs.length, context()).toBe(wanted + 1);
  });

  // Runs whenever that case is dropped (always, unless DOCEX_CORPUS_ONLY leaves it out).
  it.runIf(CASES.some((c) => c.file === 'link-outside.pdf'))(
    'never uploads the target of a link that points outside the drop folder, and leaves it in place',
    () => {
      const secret = readFileSync(secretPath());
      expect(jobs.filter((j) => j.uploadedMd5 === md5(secret))).toEqual([]);
    },
  );

  it.runIf(CASES.some((c) => c.file === 'linked-folder'))(
    'never enters a sub-folder that is a link to a folder outside the drop folder: nothing of it is read, and it stays',
    () => {
      const secret = path.join(dir, 'outside', 'folder', 'secret-in-folder.pdf');
      expect(jobs.filter((j) => j.uploadedMd5 === md5(readFileSync(secret)))).toEqual([]);
      expect(readdirSync(path.join(dir, 'outside', 'folder'))).toEqual(['secret-in-folder.pdf']);
    },
  );

  it('keeps running: a good PDF dropped after the whole corpus is archived', () => {
    expect(exitCode, context()).toBeNull();
    expect(livenessArchived, context()).toBe(true);
  });

  it(`keeps its peak RSS under ${MAX_PEAK_RSS_BYTES / 1024 / 1024} MiB through a ${BOMB_BYTES / 1024 / 1024} MiB zip bomb and a billion-laughs file`, () => {
    expect(peakRssBytes, context()).toBeGreaterThan(0);
    expect(peakRssBytes).toBeLessThan(MAX_PEAK_RSS_BYTES);
    if (process.env['DOCEX_CORPUS_VERBOSE']) {
      process.stdout.write(`corpus agent VmHWM: ${(peakRssBytes / 1024 / 1024).toFixed(1)} MiB\n`);
      // The sandbox runs in this test's process (maxRSS is in KiB).
      const sandboxPeak = process.resourceUsage().maxRSS / 1024;
      process.stdout.write(`corpus sandbox (test process) peak RSS: ${sandboxPeak.toFixed(1)} MiB\n`);
    }
  });
});
