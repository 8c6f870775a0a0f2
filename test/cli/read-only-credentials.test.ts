// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the configuration holds ${credential:} references literally
/**
 * The commands that only read the state folder run without the service's credentials: a
 * configuration written as systemd/README.md says (`${credential:…}`, TLS files under
 * `${env:CREDENTIALS_DIRECTORY}`), run by hand where CREDENTIALS_DIRECTORY is not set.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { openJournal } from '../../src/journal/index.js';

let dir: string;
let configFile: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-read-only-'));
  configFile = path.join(dir, 'agent.yaml');
  writeFileSync(
    configFile,
    `service:
  apiUrl: https://api.example.test/v1
  authUrl: https://auth.example.test
  clientId: agent-client
  clientSecret: \${credential:client-secret}
  apiKey: \${credential:api-key}
  tls:
    caFile: \${env:CREDENTIALS_DIRECTORY}/ca.pem
    certFile: \${env:CREDENTIALS_DIRECTORY}/client.pem
    keyFile: \${env:CREDENTIALS_DIRECTORY}/client.key
stateDir: ./state
`,
  );
  // The journal an agent left (empty: what matters is that it is opened and read).
  const journal = await openJournal(
    { kind: 'sqlite', file: path.join(dir, 'state', 'journal.sqlite') },
    { clock: systemClock, log: silentLogger() },
  );
  await journal.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command as a person runs it by hand: no CREDENTIALS_DIRECTORY. */
function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const { CREDENTIALS_DIRECTORY: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args, '--config', configFile],
      { env },
      (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('read-only commands without the service credentials (CREDENTIALS_DIRECTORY not set)', () => {
  it('status reads the journal instead of exiting 2 on DOCEX_CONFIG_CREDENTIAL', async () => {
    const run = await cli(['status', 'invoice-2026-0001.pdf']);
    expect(run.stderr).toBe('nothing in the journal for invoice-2026-0001.pdf\n');
    expect(run.status).toBe(1);
  });

  it('returns retry, then report, read and write the returns store', async () => {
    const retry = await cli(['returns', 'retry']);
    expect(retry).toMatchObject({
      status: 0,
      stderr: '',
      stdout: '0 failed proof download(s) due now; a running agent takes them within seconds\n',
    });
    const report = await cli(['report', '--date', '2026-11-21']);
    expect(report.stderr).toBe('');
    expect(report.stdout).toMatch(/^statuses-2026-11-21\.csv: 0 row\(s\) written to /);
    expect(report.status).toBe(0);
  });

  it('agents answers from the configuration', async () => {
    const run = await cli(['agents']);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^the journal is local to one agent/);
    expect(run.status).toBe(0);
  });
});
