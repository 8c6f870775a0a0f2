// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the configuration holds ${credential:} references literally
/**
 * The commands that do not call the service run without the service's credentials: a
 * configuration written as systemd/README.md says (`${credential:…}`, TLS files under
 * `${env:CREDENTIALS_DIRECTORY}`), run by hand where CREDENTIALS_DIRECTORY is not set. One test per
 * command of cli/read-only.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_SECRETS } from '../../src/cli/read-only.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { openJournal } from '../../src/journal/index.js';
import { ensurePki } from '../../src/sandbox/pki.js';
import { guideServiceBlock } from '../support/guide-config.js';
import { describePostgres, testDatabase } from '../support/postgres.js';

let dir: string;
let configFile: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-read-only-'));
  configFile = path.join(dir, 'agent.yaml');
  writeFileSync(configFile, guideServiceBlock());
  // The journal an agent left (empty: what matters is that it is opened and read).
  const journal = await openJournal(
    { kind: 'sqlite', file: path.join(dir, 'state', 'journal.sqlite') },
    { clock: systemClock, log: silentLogger() },
  );
  await journal.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The command as a person runs it by hand: no CREDENTIALS_DIRECTORY. */
function cli(
  args: string[],
  config = configFile,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const { CREDENTIALS_DIRECTORY: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', ...args, '--config', config],
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

  it('returns retry writes the returns store', async () => {
    const retry = await cli(['returns', 'retry']);
    expect(retry).toMatchObject({
      status: 0,
      stderr: '',
      stdout: '0 failed proof download(s) due now; a running agent takes them within seconds\n',
    });
  });

  it("report writes the day's statuses CSV", async () => {
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

  it('credentials check reads the TLS files the configuration names, not its client secret or API key', async () => {
    // The files where an operator keeps them (the guide's credentials folder), named as paths.
    const pki = ensurePki(path.join(dir, 'pki'));
    const tlsConfig = path.join(dir, 'agent-tls-files.yaml');
    writeFileSync(
      tlsConfig,
      guideServiceBlock({
        caFile: pki.paths.caCert,
        certFile: pki.paths.clientCert,
        keyFile: pki.paths.clientKey,
      }),
    );
    const run = await cli(['credentials', 'check'], tlsConfig);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')[0]).toBe('ok   tls files: readable, the key by its owner only');
    expect(run.stdout).not.toContain('FAIL');
    expect(run.status).toBe(0);
  });

  it('the commands that do not call the service are the ones tested here', () => {
    expect(Object.keys(READ_ONLY_SECRETS).sort()).toEqual([
      'agents',
      'credentials check',
      'journal copy',
      'report',
      'returns retry',
      'status',
    ]);
  });
});

describePostgres('journal copy without the service credentials (CREDENTIALS_DIRECTORY not set)', () => {
  it('journal copy copies the state folder to PostgreSQL', async () => {
    const url = await testDatabase();
    const run = await cli(['journal', 'copy', '--to', url, '--sslmode', 'disable']);
    expect(run.stderr).not.toContain('DOCEX_CONFIG');
    expect(run.stdout).toMatch(/^copied journal\.sqlite \(schema version \d+\): /m);
    expect(run.status).toBe(0);
  }, 60_000);
});
