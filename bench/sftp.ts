/**
 * SFTP scenario (issue 4), against a real OpenSSH sshd on 127.0.0.1 started for the run:
 *   1. download of one large file: the agent's transport (`SftpServer.download`, warm connections;
 *      also held to one connection) against OpenSSH's own `sftp -b` fetching the same file from the
 *      same sshd, interleaved rounds, every received size checked; once, ssh2-sftp-client's plain
 *      `get` with its defaults, the starting point of the issue;
 *   2. list + settle of a folder of many files: two listings through the control connection fed
 *      to the SFTP source's ListingTracker (the settle wait itself is not counted).
 * `npx tsx bench/sftp.ts [--mib 500] [--files 10000] [--rounds 3]` runs it alone; `npm run bench`
 * runs it in a process with the agent's Node flags.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SftpClient from 'ssh2-sftp-client';
import { silentLogger } from '../src/core/logger.js';
import { AGENT_NODE_FLAGS } from '../src/ops/node-flags.js';
import { DEFAULT_TRANSFERS, openSftpServer } from '../src/sftp/server.js';
import { ListingTracker } from '../src/sources/sftp/stability.js';
import { startSshd, type TestSshd } from '../test/sources/sftp/support/sshd.js';
import { removeScratchDirs, scratchDir } from './support/scratch.js';

export interface SftpBenchResult {
  bytes: number;
  rounds: number;
  transfers: number;
  /** Medians over the rounds. */
  opensshMs: number;
  /** OpenSSH's connect + login alone (`sftp -b` with a `pwd`): the part of opensshMs that is not transfer. */
  opensshConnectMs: number;
  /** A `sync` right after OpenSSH's `get`: writing out the dirty pages `sftp` left (it never fsyncs). */
  opensshFlushMs: number;
  agentMs: number;
  /** The agent's transport held to one connection (pipelined READs, no split). */
  agentOneConnectionMs: number;
  /** ssh2-sftp-client's plain streamed `get` with its defaults, once (the 20 s). */
  plainGetMs: number;
  opensshMiBps: number;
  agentMiBps: number;
  agentOneConnectionMiBps: number;
  plainGetMiBps: number;
  /** opensshMs / agentMs (≥ 1: the agent is at least as fast). */
  ratio: number;
  /** (opensshMs − opensshConnectMs) / agentMs: against OpenSSH's transfer time alone. */
  ratioTransferOnly: number;
  /** (opensshMs + opensshFlushMs) / agentMs: both copies on disk (the agent fsyncs before it answers). */
  ratioBothOnDisk: number;
  sizesVerified: boolean;
  listFiles: number;
  listMs: number;
  listSettleMs: number;
  ready: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};
const round1 = (x: number) => Math.round(x * 10) / 10;
const mibps = (bytes: number, ms: number) => round1(bytes / 1024 / 1024 / (ms / 1000));

function writeRandomFile(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  const chunk = randomBytes(8 * 1024 * 1024);
  try {
    for (let w = 0; w < bytes; w += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - w));
  } finally {
    closeSync(fd);
  }
}

function opensshSftp(sshd: TestSshd, batch: string): void {
  execFileSync(
    '/usr/bin/sftp',
    [
      '-b',
      '-',
      '-P',
      String(sshd.port),
      '-i',
      sshd.privateKeyPath,
      '-o',
      `UserKnownHostsFile=${sshd.knownHostsFile}`,
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      'BatchMode=yes',
      `${sshd.username}@127.0.0.1`,
    ],
    { input: batch, stdio: ['pipe', 'ignore', 'pipe'] },
  );
}

function timed(run: () => void): number {
  const t = performance.now();
  run();
  return performance.now() - t;
}

export async function benchSftp(options: {
  bytes: number;
  files: number;
  rounds: number;
}): Promise<SftpBenchResult> {
  const sshd = await startSshd();
  const local = scratchDir('docex-bench-sftp-');
  const endpoint = {
    host: sshd.host,
    port: sshd.port,
    username: sshd.username,
    privateKey: sshd.privateKey,
    hostKey: { sha256: [sshd.hostKeySha256] },
    keepaliveIntervalMs: 15_000,
    readyTimeoutMs: 20_000,
  };
  const server = openSftpServer(endpoint, { log: silentLogger() });
  const single = openSftpServer(endpoint, { log: silentLogger(), transfers: 1 });
  try {
    const remote = path.join(sshd.files, 'large.bin');
    writeRandomFile(remote, options.bytes);
    const opensshTarget = path.join(local, 'openssh.bin');
    const agentTarget = path.join(local, 'agent.bin');
    let sizesVerified = true;
    const check = (file: string) => {
      sizesVerified &&= statSync(file).size === options.bytes;
      rmSync(file);
    };
    // Warm-up: page cache, and the agent's connections (kept open, as the agent does between polls).
    await server.download(remote, agentTarget, options.bytes);
    check(agentTarget);
    await single.download(remote, agentTarget, options.bytes);
    check(agentTarget);
    const connectMs: number[] = [];
    const opensshMs: number[] = [];
    const agentMs: number[] = [];
    const singleMs: number[] = [];
    const opensshFlushMs: number[] = [];
    // Every column starts with no dirty pages: `sftp` leaves its file unflushed, and the kernel's
    // writeback of it would otherwise fall inside the next column's time.
    const flush = () => timed(() => execFileSync('sync'));
    for (let r = 0; r < options.rounds; r++) {
      connectMs.push(timed(() => opensshSftp(sshd, 'pwd\n')));
      opensshMs.push(timed(() => opensshSftp(sshd, `get ${remote} ${opensshTarget}\n`)));
      opensshFlushMs.push(flush());
      check(opensshTarget);
      const t = performance.now();
      await server.download(remote, agentTarget, options.bytes);
      agentMs.push(performance.now() - t);
      flush();
      check(agentTarget);
      const t1 = performance.now();
      await single.download(remote, agentTarget, options.bytes);
      singleMs.push(performance.now() - t1);
      flush();
      check(agentTarget);
    }
    const plain = new SftpClient();
    await plain.connect({
      host: sshd.host,
      port: sshd.port,
      username: sshd.username,
      privateKey: sshd.privateKey,
    });
    let plainGetMs: number;
    try {
      const t2 = performance.now();
      await plain.get(remote, agentTarget);
      plainGetMs = performance.now() - t2;
      check(agentTarget);
    } finally {
      await plain.end();
    }
    rmSync(remote);

    const dir = path.join(sshd.files, 'many');
    mkdirSync(dir);
    for (let i = 0; i < options.files; i++)
      writeFileSync(path.join(dir, `invoice-${String(i).padStart(6, '0')}.pdf`), 'x');
    await server.list(dir); // warm the server's directory cache
    const tracker = new ListingTracker({ kind: 'settle', settleMs: 2_000 }, () => true);
    let t = performance.now();
    const first = await server.list(dir);
    const listMs = performance.now() - t;
    tracker.feed(first, 0);
    t = performance.now();
    const second = await server.list(dir);
    const verdict = tracker.feed(second, 2_000);
    const listSettleMs = listMs + (performance.now() - t);

    const o = median(opensshMs);
    const a = median(agentMs);
    const a1 = median(singleMs);
    const c = median(connectMs);
    const f = median(opensshFlushMs);
    return {
      bytes: options.bytes,
      rounds: options.rounds,
      transfers: DEFAULT_TRANSFERS,
      opensshMs: Math.round(o),
      opensshConnectMs: Math.round(c),
      opensshFlushMs: Math.round(f),
      agentMs: Math.round(a),
      agentOneConnectionMs: Math.round(a1),
      plainGetMs: Math.round(plainGetMs),
      opensshMiBps: mibps(options.bytes, o),
      agentMiBps: mibps(options.bytes, a),
      agentOneConnectionMiBps: mibps(options.bytes, a1),
      plainGetMiBps: mibps(options.bytes, plainGetMs),
      ratio: Math.round((o / a) * 100) / 100,
      ratioTransferOnly: Math.round(((o - c) / a) * 100) / 100,
      ratioBothOnDisk: Math.round(((o + f) / a) * 100) / 100,
      sizesVerified,
      listFiles: options.files,
      listMs: Math.round(listMs),
      listSettleMs: Math.round(listSettleMs),
      ready: verdict.ready.length,
    };
  } finally {
    await Promise.all([server.close(), single.close()]);
    await sshd.stop();
  }
}

type SftpBenchOptions = Parameters<typeof benchSftp>[0];

/**
 * The scenario in a node process started with the agent's Node flags (src/ops/node-flags.ts): the
 * transport measured is the agent's, so it runs with the agent's heap and GC settings.
 */
export function benchSftpAsAgent(options: SftpBenchOptions): Promise<SftpBenchResult> {
  const args = [
    '--import',
    'tsx',
    ...AGENT_NODE_FLAGS,
    fileURLToPath(import.meta.url),
    ...['--mib', String(options.bytes / 1024 / 1024), '--files', String(options.files)],
    ...['--rounds', String(options.rounds)],
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as SftpBenchResult);
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at >= 0 ? Number(process.argv[at + 1]) : fallback;
  };
  try {
    const result = await benchSftp({
      bytes: arg('mib', 500) * 1024 * 1024,
      files: arg('files', 10_000),
      rounds: arg('rounds', 3),
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    // This process's own scratch folder (bench/run.ts removes only those it made itself).
    removeScratchDirs();
  }
}
