/**
 * The Peppol inbox earned with kills: a real agent process saves incoming documents (each download
 * slowed by an injected latency, so a pass takes a while) and is SIGKILLed while saving, several
 * times, then run to the end. Every document must then be in the inbox exactly once: one XML and
 * one summary per id, nothing left half-written, and the inbox store holding each id once.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { Database } from '../../src/core/sqlite.js';
import { addPeppolDocument } from '../../src/sandbox/peppol-documents.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { type AgentProcess, spawnAgent, writeAgentConfig } from '../support/agent-process.js';

const SEED_DIR = fileURLToPath(new URL('../../src/sandbox/seed-data/peppol/', import.meta.url));
const EXTRA = 40;
const KILLS = 3;
const TOTAL = readdirSync(SEED_DIR).filter((f) => f.endsWith('.xml')).length + EXTRA;

let dir: string;
let sandbox: TestSandbox;
let configFile: string;
const inbox = () => path.join(dir, 'inbox');

/** Resolves once this run has saved `n` documents (or exited). */
function savedAtLeast(agent: AgentProcess, n: number): Promise<void> {
  const saved = new Promise<void>((resolve) => {
    const check = () => {
      if (agent.records.filter((r) => r['msg'] === 'peppol document saved').length >= n) resolve();
    };
    check();
    agent.onRecord(check);
  });
  return Promise.race([saved, agent.exited.then(() => {})]);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-peppol-kill-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
  const xml = readFileSync(path.join(SEED_DIR, 'base-example.xml'), 'utf8');
  for (let i = 0; i < EXTRA; i++)
    addPeppolDocument(sandbox.sandbox.ctx, xml, SEED.partnerCompanyId, { emit: false });
  const answer = await sandbox.control('POST', '/faults', { route: '/download/peppol/:id', latencyMs: 40 });
  expect(answer.status).toBe(201);
  configFile = writeAgentConfig(dir, sandbox, {
    returns: { enabled: false },
    // Tests run side by side: no fixed ports.
    ops: { enabled: false },
    peppolInbox: { target: { type: 'local', path: './inbox' }, pageSize: 7 },
  });
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the Peppol inbox of a real agent process killed with SIGKILL while saving', () => {
  it(`ends with every document saved exactly once (${TOTAL} documents, ${KILLS} kills)`, async () => {
    const killedAt: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      const agent = spawnAgent(configFile);
      await savedAtLeast(agent, 3 + k);
      // Somewhere inside the next document: between its download, its two writes and its record.
      await new Promise((r) => setTimeout(r, 5 + k * 17));
      agent.child.kill('SIGKILL');
      await agent.exited;
      killedAt.push(existsSync(inbox()) ? readdirSync(inbox()).length : 0);
    }
    const final = spawnAgent(configFile);
    const deadline = Date.now() + 30_000;
    const summaries = () =>
      existsSync(inbox()) ? readdirSync(inbox()).filter((f) => f.endsWith('.json')) : [];
    while (summaries().length < TOTAL && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    final.child.kill('SIGTERM');
    const { code } = await final.exited;
    const context = `inbox sizes after each kill ${killedAt.join(',')}; last lines:\n${final.tail.join('\n')}`;
    expect(code, context).toBe(0);

    // A kill in the middle of a write may leave the target's hidden temporary file (an ERP skips
    // dotfiles); every visible file is a complete XML or summary.
    const files = readdirSync(inbox()).filter((f) => !f.startsWith('.'));
    expect(
      files.filter((f) => !/\.(xml|json)$/.test(f)),
      context,
    ).toEqual([]);
    const ids = (ext: string) =>
      files.filter((f) => f.endsWith(ext)).map((f) => f.replace(/^.*_(ppl_[^.]+)\..*$/, '$1'));
    expect(ids('.xml').length, context).toBe(TOTAL);
    expect(new Set(ids('.xml')).size, context).toBe(TOTAL);
    expect(ids('.json').sort(), context).toEqual(ids('.xml').sort());
    const db = new Database(path.join(dir, 'state', 'inbox.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM peppol_saved').get(), context).toEqual({ n: TOTAL });
    } finally {
      db.close();
    }
    // The kills landed in the middle: at least one run stopped before the inbox was complete.
    expect(
      killedAt.some((n) => n < TOTAL * 2),
      context,
    ).toBe(true);
  }, 90_000);
});
