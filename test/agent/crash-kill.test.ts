/**
 * Exactly once, earned with kills: a real agent process is SIGKILLed at random moments while it
 * works through N files, then run to completion. The sandbox's control API must then show exactly
 * one uploaded job per file, with the file's MD5, and every file must sit in archive or error
 * exactly once. N=60 with 4 kills by default; DOCEX_KILL_FILES=200 DOCEX_KILLS=8 for the long run.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { listFiles, makePdf, md5, type SandboxJob } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { type AgentProcess, PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';

const FILES = Number(process.env['DOCEX_KILL_FILES'] ?? 60);
const KILLS = Number(process.env['DOCEX_KILLS'] ?? 4);
const SEED_VALUE = Number(process.env['DOCEX_KILL_SEED'] ?? Date.now() % 100_000);

/** mulberry32: a seeded generator, so a failing run can be replayed with DOCEX_KILL_SEED. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let dir: string;
let sandbox: TestSandbox;
let configFile: string;
const inbox = () => path.join(dir, 'in');

interface StartLine {
  resumed: number;
  reclaimed: number;
  placed: number;
}
const starts: StartLine[] = [];

interface Run {
  agent: AgentProcess;
  started: Promise<void>;
  /** The first file taken: work is in flight from here. */
  working: Promise<void>;
}

function runAgent(): Run {
  const agent = spawnAgent(configFile);
  agent.onRecord((record) => {
    if (record['msg'] === 'agent started') starts.push(record as unknown as StartLine);
  });
  return { agent, started: agent.logged('agent started'), working: agent.logged('file taken') };
}

function drop(name: string, content: Buffer): void {
  const temp = path.join(inbox(), `${name}.part`);
  writeFileSync(temp, content);
  renameSync(temp, path.join(inbox(), name));
}

function placed(): { archived: string[]; refused: string[] } {
  const data = (names: string[]) => names.map((n) => path.basename(n)).filter((n) => n.endsWith('.pdf'));
  return {
    archived: data(listFiles(path.join(dir, 'archive'))),
    refused: data(listFiles(path.join(dir, 'error'))),
  };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-kill-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
  mkdirSync(inbox(), { recursive: true });
  configFile = writeAgentConfig(dir, sandbox, {
    concurrency: 4,
    shutdownGraceMs: '2s',
    folders: [{ ...PDF_FOLDER, concurrency: 4 }],
  });
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a real agent process killed with SIGKILL at random moments', () => {
  it(`ends with exactly one uploaded job per file and every file placed once (${FILES} files, ${KILLS} kills)`, async () => {
    const random = rng(SEED_VALUE);
    const files = new Map<string, Buffer>();
    for (let i = 0; i < FILES; i++)
      files.set(`doc-${String(i).padStart(4, '0')}.pdf`, await makePdf(`document ${i} ${SEED_VALUE}`));
    const names = [...files.keys()];
    const firstHalf = names.slice(0, Math.ceil(FILES / 2));
    for (const name of firstHalf) drop(name, files.get(name)!);

    let later = names.slice(firstHalf.length);
    const progress: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const run = runAgent();
      await Promise.race([run.started, run.agent.exited]);
      // Some files arrive while the agent runs, so kills also land between claim and journal.
      const batch = later.slice(0, Math.ceil(later.length / (KILLS - k)));
      later = later.slice(batch.length);
      for (const name of batch) drop(name, files.get(name)!);
      await Promise.race([run.working, run.agent.exited]);
      await new Promise((r) => setTimeout(r, Math.floor(random() * 250)));
      run.agent.child.kill('SIGKILL');
      await run.agent.exited;
      progress.push(placed().archived.length);
    }
    for (const name of later) drop(name, files.get(name)!);

    const final = runAgent();
    await Promise.race([final.started, final.agent.exited]);
    const deadline = Date.now() + 30_000;
    while (placed().archived.length + placed().refused.length < FILES && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    final.agent.child.kill('SIGTERM');
    const { code } = await final.agent.exited;
    const context = `seed ${SEED_VALUE}; archived after each kill ${progress.join(',')}; last lines:\n${final.agent.tail.join('\n')}`;
    expect(code, context).toBe(0);

    const { archived, refused } = placed();
    expect(refused, context).toEqual([]);
    expect([...archived].sort(), context).toEqual(names);
    expect(listFiles(inbox()), context).toEqual([]);

    const jobs = ((await sandbox.control('GET', '/jobs')).body.items as SandboxJob[]).filter(
      (j) => j.uploadedMd5 !== null,
    );
    expect(jobs.length, context).toBe(FILES);
    const byMd5 = new Map<string, number>();
    for (const job of jobs) byMd5.set(job.uploadedMd5!, (byMd5.get(job.uploadedMd5!) ?? 0) + 1);
    for (const [name, content] of files) expect(byMd5.get(md5(content)), `${name}; ${context}`).toBe(1);
    // The kills must have hit work in flight: some start found files to resume or take back.
    const recovered = starts.reduce((n, s) => n + s.resumed + s.reclaimed + s.placed, 0);
    expect(recovered, `${JSON.stringify(starts)}; ${context}`).toBeGreaterThan(0);
    if (process.env['DOCEX_KILL_VERBOSE']) {
      process.stdout.write(
        `kill run: seed ${SEED_VALUE}, archived after each kill ${progress.join(',')}, starts ${JSON.stringify(starts.map(({ resumed, reclaimed, placed }) => ({ resumed, reclaimed, placed })))}\n`,
      );
    }
  }, 90_000);
});
