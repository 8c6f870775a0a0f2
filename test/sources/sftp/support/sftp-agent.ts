/**
 * An agent (makeHarness: real sandbox over HTTPS + mTLS, real SQLite journal) with one SFTP folder,
 * plus helpers to drop files "remotely" (the SFTP servers of the tests serve local temp paths, so a
 * remote drop is a local write + rename into the served folder) and to look at the remote folders.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { Agent } from '../../../../src/agent/agent.js';
import type { AgentConfig } from '../../../../src/config/index.js';
import { type Harness, listFiles, makeHarness } from '../../../pipeline/support/agent-harness.js';
import { startSshd, type TestSshd } from './sshd.js';

export const WF_PDF = 'wf_pdf_email';
export const FOLDER = 'remote';

export interface SftpLogin {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKeyFile?: string;
  hostKey: { sha256?: string[]; knownHostsFile?: string };
}

/** Key login to the test sshd, its host key pinned through its known_hosts file. */
export function sshdLogin(sshd: TestSshd): SftpLogin {
  return {
    host: sshd.host,
    port: sshd.port,
    username: sshd.username,
    privateKeyFile: sshd.privateKeyPath,
    hostKey: { knownHostsFile: sshd.knownHostsFile },
  };
}

/**
 * One sshd and one sandbox for the tests of a describe block, and for each test an agent env of its
 * own (a fresh remote folder, state folder and journal, the log emptied): no test sees another's
 * files or items, whatever order they run in. The agents a test started are stopped after it, even
 * when it fails. Read `sshd` and `env` inside tests (the env changes per test).
 */
export function sshdAgentSuite(): { readonly sshd: TestSshd; readonly env: SftpAgentEnv } {
  let sshd: TestSshd | undefined;
  let h: Harness | undefined;
  let env: SftpAgentEnv | undefined;
  beforeAll(async () => {
    sshd = await startSshd();
    h = await makeHarness();
  });
  beforeEach(async () => {
    if (!sshd || !h) throw new Error('the sshd and the sandbox start before each test');
    h.logs.splice(0);
    env = await makeSftpAgent(sshdLogin(sshd), mkdtempSync(path.join(sshd.files, 'test-')), h);
  });
  afterEach(async () => {
    await env?.cleanup();
    env = undefined;
  });
  afterAll(async () => {
    await h?.cleanup();
    await sshd?.stop();
  });
  return {
    get sshd() {
      if (!sshd) throw new Error('the sshd exists inside a test only');
      return sshd;
    },
    get env() {
      if (!env) throw new Error('the SFTP agent env exists inside a test only');
      return env;
    },
  };
}

export interface SftpAgentEnv {
  h: Harness;
  /** The served drop folder (an absolute path, the same on both sides). */
  remote: string;
  /** The agent's state folder (journal; spool and local copies in `sftp/<folder>/`). */
  stateDir: string;
  config(extra?: Record<string, unknown>, folderExtra?: Record<string, unknown>): AgentConfig;
  start(config?: AgentConfig): Promise<Agent>;
  /** Writes under a dot-name, then renames into the remote drop folder (or a sub-folder: `acme/x.pdf`). */
  drop(name: string, content: Buffer | string): void;
  remoteFiles(sub?: string): string[];
  archived(): string[];
  refused(): string[];
  jobsFor(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

/**
 * `shared`: a harness (sandbox) reused across tests; this env then keeps its own state folder under
 * `remoteRoot` and its cleanup only stops its agents.
 */
export async function makeSftpAgent(
  login: SftpLogin,
  remoteRoot: string,
  shared?: Harness,
): Promise<SftpAgentEnv> {
  const h = shared ?? (await makeHarness());
  const remote = path.join(remoteRoot, 'outbox');
  mkdirSync(remote, { recursive: true });
  const stateDir = shared ? path.join(remoteRoot, 'state') : path.join(h.dir, 'state');
  const env: SftpAgentEnv = {
    h,
    remote,
    stateDir,
    config(extra = {}, folderExtra = {}) {
      return h.config(
        [
          {
            name: FOLDER,
            workflowId: WF_PDF,
            source: { type: 'sftp', ...login, path: remote, pollIntervalMs: 50, ...extra } as never,
            stability: { kind: 'settle', settleMs: 0 },
            // The defaults: local copies under <stateDir>/sftp/<folder>/.
            archiveDir: undefined,
            errorDir: undefined,
            ...folderExtra,
          },
        ],
        { stateDir },
      );
    },
    start(config = env.config()) {
      return h.startAgent(config, { source: { sftpPollIntervalMs: 40 } });
    },
    drop(name, content) {
      // `acme/x.pdf`: into a sub-folder (made when missing), written under a dot-name beside it.
      const dir = path.join(remote, path.dirname(name));
      mkdirSync(dir, { recursive: true });
      const temp = path.join(dir, `.${path.basename(name)}.uploading`);
      writeFileSync(temp, content);
      renameSync(temp, path.join(remote, name));
    },
    remoteFiles(sub = '') {
      const dir = path.join(remote, sub);
      if (!existsSync(dir)) return [];
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => e.name)
        .sort();
    },
    archived: () => listFiles(path.join(remote, '.archive')),
    refused: () => listFiles(path.join(remote, '.error')),
    async jobsFor(name) {
      return (await h.jobs()).filter((j) => j.filename === name).length;
    },
    cleanup: () => (shared ? h.stopAgents() : h.cleanup()),
  };
  return env;
}
