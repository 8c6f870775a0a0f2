// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the configuration holds ${credential:} references literally
/**
 * `docex-agent status <file>` for a file found nowhere names the drop folders the agent stops for
 * want of the folder (a mistyped path): the ERP's file may lie where no folder looks. Run as a
 * person runs it, on a configuration with a mistyped folder and the journal an agent left.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { openJournal } from '../../src/journal/index.js';
import { guideServiceBlock } from '../support/guide-config.js';

let dir: string;
let configFile: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-status-missing-'));
  configFile = path.join(dir, 'agent.yaml');
  mkdirSync(path.join(dir, 'in', 'invoices'), { recursive: true });
  mkdirSync(path.join(dir, 'in', 'made-at-start-parent'), { recursive: true });
  writeFileSync(
    configFile,
    `${guideServiceBlock()}folders:
  - name: invoices
    source: { type: local, path: ./in/invoices }
    workflowId: wf_pdf_email
  - name: mistyped
    source: { type: local, path: ./no-such-parent/invoices }
    workflowId: wf_pdf_email
  - name: made-at-start
    source: { type: local, path: ./in/made-at-start-parent/letters }
    create: true
    workflowId: wf_pdf_email
`,
  );
  const journal = await openJournal(
    { kind: 'sqlite', file: path.join(dir, 'state', 'journal.sqlite') },
    { clock: systemClock, log: silentLogger() },
  );
  await journal.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** As a person runs it by hand: no CREDENTIALS_DIRECTORY (status reads none of the service's credentials). */
function status(query: string): Promise<{ status: number; stdout: string; stderr: string }> {
  const { CREDENTIALS_DIRECTORY: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'status', query, '--config', configFile],
      { env },
      (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('docex-agent status: a file found nowhere', () => {
  it('names the drop folder that does not exist, with its key and the command that makes it (not one with create: true)', async () => {
    const run = await status('invoice-2026-0001.pdf');
    const missing = path.join(dir, 'no-such-parent', 'invoices');
    expect(run.stderr).toBe(
      [
        'nothing in the journal for invoice-2026-0001.pdf',
        '',
        `folder mistyped is stopped: drop folder ${missing} (folders[1].source.path) does not exist; the agent makes no drop folder unless the folder says create: true`,
        `  fix: create it for the agent's user and the ERP's group (install -d -o docex-agent -g docex-agent -m 2770 ${missing}, systemd/README.md step 5) or correct folders[1].source.path, then reload; or set folders[1].create: true to let the agent make it`,
        '',
      ].join('\n'),
    );
    expect(run.stdout).toBe('');
    expect(run.status).toBe(1);
  });
});
