/**
 * Figures, not a test: N small PDFs dropped at once into a running agent process (the same child
 * entry the kill test uses) against a real sandbox in this process; prints files/s from drop to
 * archived and the p95 drop→uploaded latency from the journal. Run:
 *   npx tsx test/agent/support/measure-drop.ts [files=200] [concurrency=8]
 */
import { spawn } from 'node:child_process';
import {
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
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { JOURNAL_FILE } from '../../../src/config/index.js';
import { systemClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { SqliteJournal } from '../../../src/journal/sqlite-journal.js';
import { SEED } from '../../../src/sandbox/seed-ids.js';
import { makePdf } from '../../pipeline/support/agent-harness.js';
import { startTestSandbox } from '../../sandbox/sandbox-harness.js';

const files = Number(process.argv[2] ?? 200);
const concurrency = Number(process.argv[3] ?? 8);
const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-measure-'));
const sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
const inbox = path.join(dir, 'in');
mkdirSync(inbox, { recursive: true });
const configFile = path.join(dir, 'agent.yaml');
writeFileSync(
  configFile,
  stringify({
    ...fragment,
    stateDir: './state',
    concurrency,
    log: { level: 'warn' },
    folders: [
      {
        name: 'pdf',
        source: { type: 'local', path: './in' },
        workflowId: SEED.workflows.pdfEmail,
        archiveDir: './archive',
        stability: { kind: 'rename-in' },
        concurrency,
      },
    ],
  }),
);
const child = spawn(
  process.execPath,
  [
    ...(process.env['MEASURE_PROF'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['MEASURE_PROF']] : []),
    '--import',
    'tsx',
    fileURLToPath(new URL('./agent-child.ts', import.meta.url)),
    configFile,
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const exited = new Promise((resolve) => child.on('exit', resolve));
// Started once the state folder's journal exists and a moment passed for the folder watch.
while (!readdirSync(dir).includes('state') || !readdirSync(path.join(dir, 'state')).includes(JOURNAL_FILE)) {
  await new Promise((r) => setTimeout(r, 50));
}
await new Promise((r) => setTimeout(r, 500));
const pdfs = await Promise.all(Array.from({ length: files }, (_, i) => makePdf(`measure ${i}`)));
const t0 = Date.now();
pdfs.forEach((pdf, i) => {
  const temp = path.join(inbox, `f${i}.pdf.part`);
  writeFileSync(temp, pdf);
  renameSync(temp, path.join(inbox, `f${i}.pdf`));
});
const day = path.join(dir, 'archive', new Date().toISOString().slice(0, 10));
const archived = () => {
  try {
    return readdirSync(day).filter((n) => n.endsWith('.pdf')).length;
  } catch {
    return 0;
  }
};
while (archived() < files) await new Promise((r) => setTimeout(r, 10));
const elapsed = Date.now() - t0;
child.kill('SIGTERM');
await exited;
const journal = SqliteJournal.open(path.join(dir, 'state', JOURNAL_FILE), {
  clock: systemClock,
  log: silentLogger(),
});
const latencies: number[] = [];
for (const item of await journal.recent(files)) {
  latencies.push(((await journal.history(item.id)).find((h) => h.to === 'uploaded')?.at ?? 0) - t0);
}
latencies.sort((a, b) => a - b);
await journal.close();
const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1] ?? 0;
process.stdout.write(
  `${files} PDFs (${pdfs[0]!.length} bytes each), concurrency ${concurrency}, agent in its own process: ` +
    `${((files * 1000) / elapsed).toFixed(1)} files/s drop→archived, p95 drop→uploaded ${p95} ms, total ${elapsed} ms\n`,
);
await sandbox.stop();
rmSync(dir, { recursive: true, force: true });
