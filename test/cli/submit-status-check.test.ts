import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { formatCheck, runChecks } from '../../src/cli/check-runner.js';
import { statusText } from '../../src/cli/status-runner.js';
import { submitFile } from '../../src/cli/submit-runner.js';
import { JOURNAL_FILE, loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { makePdf, md5 } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';

let sandbox: TestSandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = sandbox.stateDir;
});
afterAll(async () => {
  await sandbox.stop();
});

/** The sandbox's fragment (service: only) plus whatever a test adds, written beside it. */
function writeConfig(name: string, extra: Record<string, unknown>): string {
  const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as object;
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, stringify({ ...fragment, ...extra }));
  return file;
}

describe('docex-agent submit (one-shot, with a config holding only the service connection)', () => {
  it('uploads the file, leaves it in place, and refuses the same content a second time', async () => {
    const { config } = loadConfig(sandbox.sandbox.paths.agentConfigFragment);
    const pdf = await makePdf('submitted by cron');
    const file = path.join(dir, 'cron', 'statement.pdf');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, pdf);

    const first = await submitFile({
      file,
      workflowId: SEED.workflows.pdfEmail,
      config,
      log: silentLogger(),
    });
    expect(first.ok).toBe(true);
    expect(first.message).toMatch(/^uploaded statement.pdf as job job_/);
    expect(readFileSync(file)).toEqual(pdf);
    const jobs = (await sandbox.control('GET', '/jobs')).body.items as Array<{
      id: string;
      uploadedMd5: string | null;
    }>;
    expect(jobs.find((j) => j.id === first.item?.jobId)?.uploadedMd5).toBe(md5(pdf));

    const again = await submitFile({
      file,
      workflowId: SEED.workflows.pdfEmail,
      config,
      log: silentLogger(),
    });
    expect(again.ok).toBe(false);
    expect(again.message).toContain('DOCEX_DUPLICATE');

    // status, by path and by job id, from the same journal
    const journalFile = path.join(config.stateDir, JOURNAL_FILE);
    const byPath = await statusText({ kind: 'sqlite', file: journalFile }, file);
    expect(byPath.found).toBe(true);
    expect(byPath.text).toContain('[done]');
    expect(byPath.text).toContain('[rejected]');
    expect(byPath.text).toContain(`job ${first.item?.jobId}`);
    expect(byPath.text).toMatch(/creating -> created/);
    expect(byPath.text).not.toMatch(/X-Amz|signature=|\?/i);
    const byJob = await statusText({ kind: 'sqlite', file: journalFile }, first.item!.jobId!);
    expect(byJob.text).toContain('statement.pdf  [done]');
    expect((await statusText({ kind: 'sqlite', file: journalFile }, 'job_unknown')).found).toBe(false);
  });

  it('refuses a workflow that is disabled before sending anything', async () => {
    const { config } = loadConfig(sandbox.sandbox.paths.agentConfigFragment);
    const file = path.join(dir, 'cron', 'other.pdf');
    writeFileSync(file, await makePdf('disabled workflow'));
    await expect(
      submitFile({ file, workflowId: SEED.workflows.disabled, config, log: silentLogger() }),
    ).rejects.toMatchObject({ code: 'DOCEX_FOLDER_WORKFLOW' });
  });
});

describe('docex-agent check', () => {
  it('passes token, service, workflow and folder checks, and names a disabled workflow with a fix', async () => {
    for (const drop of ['good', 'off']) mkdirSync(path.join(dir, 'check-in', drop), { recursive: true });
    const file = writeConfig('check', {
      stateDir: './check-state',
      folders: [
        {
          name: 'good',
          source: { type: 'local', path: './check-in/good' },
          workflowId: SEED.workflows.pdfEmail,
        },
        {
          name: 'off',
          source: { type: 'local', path: './check-in/off' },
          workflowId: SEED.workflows.disabled,
        },
      ],
    });
    const lines = await runChecks(loadConfig(file).config);
    const by = (what: string) => lines.find((l) => l.what === what);
    expect(by('token')?.ok).toBe(true);
    expect(by('api key')?.ok).toBe(true);
    expect(by('folder good')?.ok).toBe(true);
    expect(by('folder off')).toMatchObject({ ok: false });
    expect(by('folder off')?.detail).toMatch(/DOCEX_FOLDER_WORKFLOW: workflow wf_disabled is disabled/);
    expect(by('folder good source')?.ok).toBe(true);
    expect(formatCheck(by('folder off')!)).toMatch(/^✘ folder off: .*\n {4}fix: /);
    expect(formatCheck(by('token')!)).toMatch(/^✔ token: /);
  });

  it('fails the service check with a hint when the API key is wrong', async () => {
    const keyFile = path.join(dir, 'wrong-key');
    writeFileSync(keyFile, 'not-the-key', { mode: 0o600 });
    const fragment = parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as {
      service: Record<string, unknown>;
    };
    const file = path.join(dir, 'check-bad.yaml');
    writeFileSync(file, stringify({ service: { ...fragment.service, apiKey: `\${file:${keyFile}}` } }));
    const lines = await runChecks(loadConfig(file).config);
    const service = lines.find((l) => l.what === 'api key');
    expect(service?.ok).toBe(false);
    expect(service?.detail).toMatch(/DOCEX_API_403/);
    expect(service?.hint).toMatch(/API key/);
  });
});
