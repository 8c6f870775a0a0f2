/**
 * The set-up the SFTP agent tests against the fault server share: one sandbox for the test file;
 * per test a fresh fault server, remote folder, state folder and journal. Registers the vitest hooks;
 * read `server` and `env` inside tests (they change per test).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type Harness, makeHarness } from '../../../pipeline/support/agent-harness.js';
import { type FaultServer, startFaultServer } from './fault-server.js';
import { makeSftpAgent, type SftpAgentEnv } from './sftp-agent.js';

export interface FaultAgentContext {
  readonly server: FaultServer;
  readonly env: SftpAgentEnv;
  /** Today on the agent's clock, as the archive's day folder names it. */
  day(): string;
}

export function useFaultServerAgent(tempPrefix: string): FaultAgentContext {
  let h: Harness;
  let root: string;
  let server: FaultServer | undefined;
  let env: SftpAgentEnv | undefined;

  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(async () => {
    await h.cleanup();
  });
  beforeEach(async () => {
    h.logs.splice(0);
    root = mkdtempSync(path.join(os.tmpdir(), tempPrefix));
    server = await startFaultServer();
    env = await makeSftpAgent(
      {
        host: server.host,
        port: server.port,
        username: server.username,
        password: server.password,
        hostKey: { sha256: [server.fingerprint] },
      },
      root,
      h,
    );
  });
  afterEach(async () => {
    await env?.cleanup();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  return {
    get server() {
      if (!server) throw new Error('the fault server exists inside a test only');
      return server;
    },
    get env() {
      if (!env) throw new Error('the SFTP agent env exists inside a test only');
      return env;
    },
    day() {
      return new Date(this.env.h.clock.now()).toISOString().slice(0, 10);
    },
  };
}
