/**
 * One large PDF-headed file (sparse: a PDF header, zeros, `%%EOF`): through the agent in its own
 * process (drop → uploaded, and the PUT alone: created → uploaded, from its journal; peak RSS from
 * /proc/<pid>/status VmHWM) against `curl -T` of the same file to an upload URL of the same sandbox.
 * Each file is read once before its run, as a file an ERP just wrote sits in the page cache: the
 * first reader of a sparse file otherwise pays for zero-filling 1 GiB of page cache (about 3 s
 * here), which fell on the agent's SHA-256 but was hidden in curl's upload.
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { SEED } from '../src/sandbox/seed-ids.js';
import { dropAll, finishAgentRun, startAgentRun, waitFinished } from './support/agent-run.js';
import { type SandboxInfo, startSandboxProcess } from './support/processes.js';
import { scratchDir } from './support/scratch.js';
import { RawClient } from './support/service.js';
import { round } from './support/stats.js';

export interface LargeFileOptions {
  /** The compiled agent CLI (support/build-agent.ts). */
  mainJs: string;
  bytes: number;
  timeoutMs: number;
}

export interface LargeFileResult {
  scenario: 'large-file';
  bytes: number;
  agentDropToUploadedMiBps: number;
  agentPutMiBps: number;
  agentSeconds: number;
  agentPeakRssMiB: number | undefined;
  curlMiBps: number;
  curlSeconds: number;
  agentVsCurl: number;
  agentPutVsCurl: number;
}

const MIB = 1024 * 1024;

function writeSparsePdf(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, '%PDF-1.7\n% docex-agent benchmark: a large sparse file\n', 0);
    writeSync(fd, '\n%%EOF\n', bytes - 7);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the file through once (into the page cache), a MiB at a time, then flushes every dirty
 * page: each column starts with the sandbox's disk idle, not still writing the last column's GiB.
 */
function warm(file: string): void {
  const fd = openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(MIB);
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd);
  }
  execFileSync('sync');
}

async function curlUpload(info: SandboxInfo, file: string, timeoutMs: number): Promise<number> {
  const client = new RawClient(info, 1);
  let url: string;
  try {
    await client.fetchToken();
    url = (await client.createSingleFile(SEED.workflows.pdfEmail, path.basename(file))).url;
  } finally {
    await client.close();
  }
  const started = Date.now();
  const child = spawn(
    'curl',
    ['-sS', '--fail', '--cacert', info.paths.caCert, '-T', file, url, '-o', '/dev/null'],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`curl -T exited ${code}`);
  return Date.now() - started;
}

export async function benchLargeFile(options: LargeFileOptions): Promise<LargeFileResult> {
  const dir = scratchDir('docex-bench-large-');
  const sandbox = await startSandboxProcess(path.join(dir, 'sandbox'));
  try {
    const run = await startAgentRun(path.join(dir, 'agent'), sandbox.info, {
      mainJs: options.mainJs,
      concurrency: 1,
      maxFileBytes: options.bytes * 2,
    });
    let agent: Awaited<ReturnType<typeof finishAgentRun>>;
    let dropped: Map<string, number>;
    try {
      writeSparsePdf(path.join(run.staging, 'large.pdf'), options.bytes);
      warm(path.join(run.staging, 'large.pdf'));
      dropped = dropAll(run, ['large.pdf']);
      await waitFinished(run, 1, options.timeoutMs, 100);
      agent = await finishAgentRun(run);
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
    const times = agent.times.get('large.pdf');
    if (times?.uploaded === undefined || times.created === undefined)
      throw new Error('agent: large.pdf not uploaded');
    rmSync(path.join(dir, 'agent', 'archive'), { recursive: true, force: true });

    const curlDir = path.join(dir, 'curl');
    mkdirSync(curlDir);
    const curlFile = path.join(curlDir, 'large.pdf');
    writeSparsePdf(curlFile, options.bytes);
    warm(curlFile);
    const curlMs = await curlUpload(sandbox.info, curlFile, options.timeoutMs);

    const mibps = (ms: number) => round(options.bytes / MIB / (ms / 1000));
    const agentMs = times.uploaded - dropped.get('large.pdf')!;
    const putMs = times.uploaded - times.created;
    return {
      scenario: 'large-file',
      bytes: options.bytes,
      agentDropToUploadedMiBps: mibps(agentMs),
      agentPutMiBps: mibps(putMs),
      agentSeconds: round(agentMs / 1000, 2),
      agentPeakRssMiB: agent.peakRssMiB && round(agent.peakRssMiB),
      curlMiBps: mibps(curlMs),
      curlSeconds: round(curlMs / 1000, 2),
      agentVsCurl: round(curlMs / agentMs, 2),
      agentPutVsCurl: round(curlMs / putMs, 2),
    };
  } finally {
    await sandbox.stop();
  }
}
