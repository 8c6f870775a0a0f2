/**
 * A file the agent's process really cannot read (no injected fault): an ERP account's file of mode
 * 0600 in a drop folder. The suite runs as root in CI, and root reads every file, so there the
 * agent process is started without the capabilities that let root pass file permissions
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: `setpriv`), and the file belongs to another uid, as the
 * ERP's account would own it. Run by another user the file is the user's own with mode 0000.
 * One warning with the owner, mode and fix; the gauge, /readyz and `status` show it; the file stays
 * where it is; once the ERP's side is fixed it is taken as any other.
 */
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeUser } from '../../src/core/accounts.js';
import { systemClock } from '../../src/core/clock.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import {
  type AgentProcess,
  PDF_FOLDER,
  spawnAgent,
  spawnCli,
  writeAgentConfig,
} from '../support/agent-process.js';
import { waitFor } from '../support/wait-for.js';

const AS_ROOT = process.getuid?.() === 0;
/**
 * The ERP's account as the test plays it: under root a uid of its own (no account is made; not
 * 65534, which a user namespace shows for every account it does not map), else this user.
 */
const ERP_UID = AS_ROOT ? 4242 : (process.getuid?.() ?? 0);
/** Root without the capabilities that pass file permissions: what an unprivileged agent meets. */
const UNPRIVILEGED = AS_ROOT
  ? ['setpriv', '--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-dac_override,-dac_read_search']
  : [];
const NAME = 'erp-umask-077.pdf';
const WARNING = 'file the agent cannot read: it waits in the drop folder, untouched';

let dir: string;
let sandbox: TestSandbox;
let agent: AgentProcess | undefined;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-unreadable-'));
  sandbox = await startTestSandbox({ stateDir: path.join(dir, 'sandbox'), clock: systemClock });
});
afterAll(async () => {
  if (agent && agent.child.exitCode === null && agent.child.signalCode === null) {
    agent.child.kill('SIGKILL');
    await agent.exited;
  }
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The body of an ops endpoint, whatever its status. */
async function get(url: string): Promise<string> {
  return (await fetch(url)).text();
}

const gauge = (metrics: string) =>
  metrics.split('\n').find((l) => l.startsWith('docex_files_unreadable{folder="pdf"} '));

function runStatus(): Promise<string> {
  const cli = spawnCli(['status', NAME, '--config', path.join(dir, 'agent.yaml')]);
  let out = '';
  cli.stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  return new Promise((resolve) => cli.on('exit', () => resolve(out)));
}

describe('a drop file the agent process cannot read (real permissions)', () => {
  it('is reported once with its owner, mode and fix, counted, named by /readyz and status, left in place, and taken once the ERP fixes it', async () => {
    const inbox = path.join(dir, 'in');
    mkdirSync(inbox);
    const configFile = writeAgentConfig(dir, sandbox, {
      folders: [PDF_FOLDER],
      ops: { listen: '127.0.0.1:0' },
    });
    agent = spawnAgent(configFile, {}, UNPRIVILEGED);
    await waitFor(() => agent!.seen('agent started') || agent!.child.exitCode !== null, 60_000);
    expect(agent.seen('agent started'), agent.tail.join('\n')).toBe(true);
    const opsUrl = String(agent.records.find((r) => r['msg'] === 'ops endpoints listening')?.['address']);

    // The ERP writes with umask 077 and renames its file in.
    const dropped = path.join(inbox, NAME);
    const part = path.join(inbox, `${NAME}.part`);
    writeFileSync(part, await makePdf('dropped with umask 077'));
    if (AS_ROOT) chownSync(part, ERP_UID, ERP_UID);
    chmodSync(part, AS_ROOT ? 0o600 : 0o000);
    renameSync(part, dropped);

    await waitFor(() => agent!.seen(WARNING), 30_000);
    const warning = agent.records.find((r) => r['msg'] === WARNING)!;
    expect(warning).toMatchObject({
      level: 'warn',
      code: 'DOCEX_SOURCE_FILE_UNREADABLE',
      folder: 'pdf',
      file: NAME,
      path: dropped,
      cannot: 'read',
      errno: 'EACCES',
      mode: AS_ROOT ? '0600' : '0000',
      owner: describeUser(ERP_UID),
    });
    expect(String(warning['fix'])).toMatch(
      /umask 007 or 027 .*setfacl -d -m .*chmod g\+r .*systemd\/README\.md/,
    );

    expect(gauge(await get(`${opsUrl}/metrics`))).toBe('docex_files_unreadable{folder="pdf"} 1');
    const ready = JSON.parse(await get(`${opsUrl}/readyz`)) as {
      checks: Record<string, { ok: boolean; detail?: string }>;
    };
    expect(ready.checks['unreadableFiles']?.ok).toBe(true);
    expect(ready.checks['unreadableFiles']?.detail).toContain(
      `pdf/${NAME}: cannot read (EACCES), mode ${AS_ROOT ? '0600' : '0000'}, owner ${describeUser(ERP_UID)}`,
    );
    // The agent's report in its state folder is written just after the warning: status reads it.
    const status = await waitFor(async () => {
      const out = await runStatus();
      return out.includes('the agent cannot read it (EACCES)') ? out : undefined;
    }, 20_000);
    expect(status).toContain(`[waiting in the drop folder: not taken]`);
    expect(readdirSync(inbox)).toContain(NAME);

    // The ERP's side fixed for this file: its group is the agent's, and may read it.
    if (AS_ROOT) chownSync(dropped, ERP_UID, 0);
    chmodSync(dropped, 0o640);
    await waitFor(() => listFiles(path.join(dir, 'archive')).some((f) => f.endsWith(NAME)), 60_000);
    expect(agent.seen('file the agent could not read is taken now')).toBe(true);
    expect(agent.records.filter((r) => r['msg'] === WARNING)).toHaveLength(1);
    expect(gauge(await get(`${opsUrl}/metrics`))).toBe('docex_files_unreadable{folder="pdf"} 0');

    agent.child.kill('SIGTERM');
    expect(await agent.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
