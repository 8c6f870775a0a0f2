import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitCommand } from '../../src/cli/submit-runner.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { spawnCli } from '../support/agent-process.js';

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.stop();
});

async function pdfFile(name: string, text: string): Promise<string> {
  const file = path.join(sandbox.stateDir, 'progress', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, await makePdf(text));
  return file;
}

/** The CLI as a user runs it, stdout and stderr piped (not a terminal). */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('submit progress', () => {
  it('prints only the result line when stderr is not a terminal (no progress, no escape codes)', async () => {
    const file = await pdfFile('piped.pdf', 'submitted through a pipe');
    const run = await runCli([
      'submit',
      file,
      '--workflow',
      SEED.workflows.pdfEmail,
      '--config',
      sandbox.sandbox.paths.agentConfigFragment,
    ]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^uploaded piped\.pdf as job job_\w+\n$/);
    expect(run.code).toBe(0);
  });

  it('on a terminal shows the upload on one line rewritten in place, cleared before the result', async () => {
    const file = await pdfFile('terminal.pdf', 'submitted on a terminal');
    const out = { stdout: '', stderr: '' };
    const previousExitCode = process.exitCode;
    await submitCommand(
      file,
      { workflow: SEED.workflows.pdfEmail, config: sandbox.sandbox.paths.agentConfigFragment },
      {
        stdout: { write: (t: string) => (out.stdout += t) },
        stderr: { isTTY: true, write: (t: string) => (out.stderr += t) },
      },
    );
    expect(process.exitCode).toBe(0);
    process.exitCode = previousExitCode;
    expect(out.stderr).toMatch(/^\r\u001b\[Kuploading terminal\.pdf: \d+ (B|KiB) of \d+ (B|KiB) \(\d+ %\)/);
    expect(out.stderr.endsWith('\r\u001b[K')).toBe(true);
    expect(out.stdout).toMatch(/^uploaded terminal\.pdf as job job_\w+\n$/);
  });
});
