/**
 * The follower killed with SIGKILL while it writes proofs and status files: a real agent process
 * against a real sandbox, killed a few times once proofs start landing, then run to the end. Every
 * file must end with a final status file naming both proofs, every proof in place once under its
 * name with the bytes the service holds, and no temp file left behind.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../bench/chaos/scenario.js';
import { systemClock } from '../../src/core/clock.js';
import type { StatusDocument } from '../../src/returns/status-files.js';
import { listFiles, makePdf, md5 } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { type AgentProcess, PDF_FOLDER, spawnAgent, writeAgentConfig } from '../support/agent-process.js';

const FILES = 10;
const KILLS = 3;
/** The kill moments are drawn from this seed: a failing run is replayed with DOCEX_KILL_SEED. */
const SEED_VALUE = Number(process.env['DOCEX_KILL_SEED'] ?? Date.now() % 100_000);

let dir: string;
let sandbox: TestSandbox;
let configFile: string;

interface Run {
  agent: AgentProcess;
  started: Promise<void>;
  proofWritten: Promise<void>;
}

function runAgent(): Run {
  const agent = spawnAgent(configFile);
  return { agent, started: agent.logged('agent started'), proofWritten: agent.logged('proof written') };
}

/**
 * A file's status and the day folder it is in (its claim's UTC day): looked up in every day folder,
 * since a run may cross midnight.
 */
const statusOf = (name: string): { day: string; doc: StatusDocument } | undefined => {
  const root = path.join(dir, 'state', 'out', 'statuses');
  for (const day of existsSync(root) ? readdirSync(root) : []) {
    const file = path.join(root, day, `${name}.status.json`);
    if (existsSync(file)) return { day, doc: JSON.parse(readFileSync(file, 'utf8')) as StatusDocument };
  }
  return undefined;
};
const status = (name: string): StatusDocument | undefined => statusOf(name)?.doc;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-follow-kill-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  configFile = writeAgentConfig(dir, sandbox, {
    folders: [PDF_FOLDER],
    returns: {
      follow: {
        schedule: '* * * * * *',
        firstPollMs: 0,
        minIntervalMs: '1s',
        maxIntervalMs: '2s',
        concurrency: 2,
      },
    },
  });
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the follower killed with SIGKILL while writing proofs', () => {
  it(`ends with every status final and every proof in place once (${FILES} files, ${KILLS} kills)`, async () => {
    const names = Array.from({ length: FILES }, (_, i) => `kill-${i}.pdf`);
    for (const name of names) {
      const temp = path.join(dir, 'in', `${name}.part`);
      writeFileSync(temp, await makePdf(name));
      renameSync(temp, path.join(dir, 'in', name));
    }
    const random = rng(SEED_VALUE);
    let kills = 0;
    for (let k = 0; k < KILLS; k++) {
      const run = runAgent();
      await Promise.race([run.started, run.agent.exited]);
      const wrote = await Promise.race([
        run.proofWritten.then(() => true),
        run.agent.exited.then(() => false),
        new Promise<boolean>((r) => setTimeout(() => r(false), 15_000)),
      ]);
      if (!wrote) {
        run.agent.child.kill('SIGKILL');
        await run.agent.exited;
        break;
      }
      await new Promise((r) => setTimeout(r, Math.floor(random() * 150)));
      run.agent.child.kill('SIGKILL');
      await run.agent.exited;
      kills++;
    }

    const final = runAgent();
    await Promise.race([final.started, final.agent.exited]);
    const done = () => names.every((n) => status(n)?.final);
    const deadline = Date.now() + 40_000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    final.agent.child.kill('SIGTERM');
    const { code } = await final.agent.exited;
    const context = `seed ${SEED_VALUE}; kills ${kills}; last lines:\n${final.agent.tail.join('\n')}`;
    expect(code, context).toBe(0);
    expect(kills, context).toBeGreaterThan(0);

    const proofsRoot = path.join(dir, 'state', 'out', 'proofs');
    const expected: string[] = [];
    for (const name of names) {
      const found = statusOf(name);
      const s = found?.doc;
      expect(s?.final, `${name}; ${context}`).toBe(true);
      const event = s!.jobs[0]!.sendingEvents[0]!;
      for (const doc of event.documents.filter((d) => d.type !== 'ORIGINAL')) {
        expect(doc.proof, `${name} ${doc.type}`).toBe(
          `${found!.day}/${name.replace('.pdf', '')}/${event.sendingEventId}-${doc.type}.pdf`,
        );
        expected.push(doc.proof!);
        const url = (
          await sandbox.api(
            'GET',
            `/sending-events/${event.sendingEventId}/files/${doc.fileReference}/download-url`,
          )
        ).body.url;
        const original = await sandbox.files('GET', url);
        expect(md5(readFileSync(path.join(proofsRoot, doc.proof!)))).toBe(md5(original.raw));
      }
    }
    // Exactly the proofs named under visible names, no second copies. A kill in the middle of a
    // write can leave the output target's hidden temp file (`.docex-<hash>-<writer>.tmp`) behind,
    // never a file under a final name.
    const visible = (files: string[]) =>
      files.filter((f) => !/^\.docex-[0-9a-f]{12}(-[0-9a-f]{8})?\.tmp$/.test(path.basename(f)));
    expect(visible(listFiles(proofsRoot)).sort()).toEqual([...expected].sort());
    expect(
      visible(listFiles(path.join(dir, 'state', 'out', 'statuses'))).every((f) => f.endsWith('.status.json')),
    ).toBe(true);
    expect(listFiles(path.join(dir, 'state', 'returns-tmp'))).toEqual([]);
  }, 120_000);
});
