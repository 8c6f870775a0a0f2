/**
 * A real OpenSSH sshd for tests: 127.0.0.1 on a free port, its own ed25519 host key, a user key in
 * its own authorized_keys, `internal-sftp`, everything in a temp folder. No chroot: tests use
 * absolute paths under `root`.
 *
 * Missing sshd: suites are skipped with a visible reason (`describeSshd`), unless
 * DOCEX_REQUIRE_SSHD=1 (CI), where the suite fails instead.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';
import { freePort } from '../../../support/free-port.js';

export const SSHD_PATH = process.env.DOCEX_SSHD_PATH ?? '/usr/sbin/sshd';
export const sshdAvailable = existsSync(SSHD_PATH) && existsSync('/usr/bin/ssh-keygen');
const sshdRequired = process.env.DOCEX_REQUIRE_SSHD === '1';

/**
 * `describe` for suites that need a real sshd: skipped (name says why) when sshd is missing, or a
 * failing test in its place when DOCEX_REQUIRE_SSHD=1.
 */
export function describeSshd(name: string, body: () => void): void {
  if (sshdAvailable) {
    describe(name, body);
    return;
  }
  if (sshdRequired) {
    describe(name, () => {
      it('needs a real OpenSSH sshd (DOCEX_REQUIRE_SSHD=1)', () => {
        throw new Error(
          `${SSHD_PATH} not found: install openssh-server (DOCEX_REQUIRE_SSHD=1 forbids skipping)`,
        );
      });
    });
    return;
  }
  describe.skipIf(true)(`${name} [skipped: ${SSHD_PATH} not found; install openssh-server]`, body);
}

export interface SshdOptions {
  /** Extra sshd_config lines (appended). */
  extraConfig?: readonly string[];
  /** Arguments of internal-sftp, e.g. `['-P', 'rename,posix-rename']` to refuse renames. */
  sftpArgs?: readonly string[];
}

export interface TestSshd {
  host: string;
  port: number;
  username: string;
  privateKey: Buffer;
  privateKeyPath: string;
  /** `SHA256:…` as `ssh-keygen -l` prints it (no padding). */
  hostKeySha256: string;
  /** A known_hosts file with `[127.0.0.1]:port` → this host key. */
  knownHostsFile: string;
  /** Temp folder; `root/files` is a ready, empty folder for test data. */
  root: string;
  files: string;
  /** Drops every open SSH session (kills the per-connection sshd children); the listener stays. */
  dropSessions(): void;
  /** Freezes every open session (SIGSTOP: a server that stops answering); returns a function that kills them. */
  freezeSessions(): () => void;
  /** Stops and starts the listener again on the same port with the same keys. */
  restart(): Promise<void>;
  /** Stops the listener and every session (the server is down); `resume()` brings it back. */
  halt(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** `SHA256:base64-without-padding` of an OpenSSH public key line's blob. */
export function fingerprintOfPublicKeyLine(line: string): string {
  const blob = Buffer.from(line.trim().split(/\s+/)[1] ?? '', 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Generates an ed25519 key pair with no passphrase; returns the private key path. */
export function generateKey(dir: string, name: string): string {
  const file = path.join(dir, name);
  execFileSync('/usr/bin/ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file]);
  return file;
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there are no children
  }
}

function waitListening(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => done(new Error(`sshd did not start within 10 s: ${stderr}`)), 10_000);
    const onData = (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`port ${port}`) && stderr.includes('listening')) done();
    };
    const onExit = (code: number | null) => done(new Error(`sshd exited (${code}): ${stderr}`));
    function done(err?: Error) {
      clearTimeout(timer);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    }
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

export async function startSshd(options: SshdOptions = {}): Promise<TestSshd> {
  if (!sshdAvailable) throw new Error(`${SSHD_PATH} not found: install openssh-server`);
  const root = mkdtempSync(path.join(os.tmpdir(), 'docex-sshd-'));
  const files = path.join(root, 'files');
  mkdirSync(files);
  // Debian's sshd insists on its privilege separation folder, even with -D.
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const hostKeyPath = generateKey(root, 'host_key');
  const privateKeyPath = generateKey(root, 'user_key');
  writeFileSync(path.join(root, 'authorized_keys'), readFileSync(`${privateKeyPath}.pub`));
  const hostPub = readFileSync(`${hostKeyPath}.pub`, 'utf8').trim();
  const username = os.userInfo().username;

  let port = 0;
  let child: ChildProcess | undefined;
  const configPath = path.join(root, 'sshd_config');
  const writeConfig = () =>
    writeFileSync(
      configPath,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKeyPath}`,
        `PidFile ${path.join(root, 'sshd.pid')}`,
        `AuthorizedKeysFile ${path.join(root, 'authorized_keys')}`,
        'StrictModes no',
        'UsePAM no',
        'PermitRootLogin yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        ['Subsystem sftp internal-sftp', ...(options.sftpArgs ?? [])].join(' '),
        // Tests and the bench open several connections at once; don't drop them.
        'MaxStartups 100:30:200',
        'MaxSessions 50',
        'LogLevel INFO',
        ...(options.extraConfig ?? []),
        '',
      ].join('\n'),
    );

  const launch = async () => {
    for (let attempt = 0; ; attempt++) {
      if (port === 0 || attempt > 0) port = await freePort();
      writeConfig();
      const proc = spawn(SSHD_PATH, ['-D', '-e', '-f', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
      try {
        await waitListening(proc, port);
        child = proc;
        return;
      } catch (err) {
        proc.kill('SIGKILL');
        if (attempt >= 3) throw err;
      }
    }
  };
  const relaunchSamePort = async () => {
    const proc = spawn(SSHD_PATH, ['-D', '-e', '-f', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    await waitListening(proc, port);
    child = proc;
  };
  const kill = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    for (const pid of childPids(proc.pid ?? 0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  };

  await launch();
  // A test process that dies without stop() must not leave its sshd running.
  const killOnExit = () => {
    child?.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const knownHostsFile = path.join(root, 'known_hosts');
  writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${hostPub}\n`);

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    username,
    privateKey: readFileSync(privateKeyPath),
    privateKeyPath,
    hostKeySha256: fingerprintOfPublicKeyLine(hostPub),
    knownHostsFile,
    root,
    files,
    dropSessions() {
      for (const pid of childPids(child?.pid ?? 0)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    },
    freezeSessions() {
      const frozen = childPids(child?.pid ?? 0);
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGSTOP');
        } catch {}
      }
      return () => {
        for (const pid of frozen) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        }
      };
    },
    async restart() {
      await kill();
      await relaunchSamePort();
    },
    halt: kill,
    resume: relaunchSamePort,
    async stop() {
      process.off('exit', killOnExit);
      await kill();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
