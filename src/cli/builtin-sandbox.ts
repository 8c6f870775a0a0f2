/**
 * The built-in sandbox (sandbox.enabled): the command line starts it in this process and hands the
 * agent only its connection; the agent does not know the sandbox. Loaded only when enabled: the
 * emulator (PKI, PDF, its servers) is most of a cold start's memory.
 */
import { openConnection, type SandboxService, type ServiceClientOptions } from '../agent/connection.js';
import type { DocexClient } from '../api/index.js';
import type { AgentConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RunningSandbox } from '../sandbox/index.js';

async function startConfiguredSandbox(config: AgentConfig, log: Logger): Promise<RunningSandbox> {
  const { startSandbox } = await import('../sandbox/index.js');
  return startSandbox({
    stateDir: config.sandbox.stateDir,
    speed: config.sandbox.speed,
    uploadWindowMs: config.sandbox.uploadWindowMs,
    names: config.sandbox.names,
    apiPort: config.sandbox.ports.api,
    authPort: config.sandbox.ports.auth,
    filesPort: config.sandbox.ports.files,
    adminPort: config.sandbox.ports.admin,
    log: log.child({ part: 'sandbox' }),
  });
}

/** The running sandbox's URLs and the credentials it issued, as client options. */
export function clientOptionsFromSandbox(sandbox: RunningSandbox): ServiceClientOptions {
  const c = sandbox.credentials;
  return {
    apiUrl: sandbox.urls.api,
    authUrl: sandbox.urls.auth,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    apiKey: c.apiKey,
    tls: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem },
  };
}

/** What the agent calls, in its start order, to start the configuration's sandbox. */
export function sandboxStarter(config: AgentConfig, log: Logger): () => Promise<SandboxService> {
  return async () => {
    const sandbox = await startConfiguredSandbox(config, log);
    return { clientOptions: clientOptionsFromSandbox(sandbox), stop: () => sandbox.stop() };
  };
}

/** A one-shot command's connection: the configured service, or the built-in sandbox started here. */
export async function openCommandConnection(
  config: AgentConfig,
  log: Logger,
  clock?: Clock,
): Promise<{ client: DocexClient; sandbox: RunningSandbox | undefined }> {
  const sandbox = config.sandbox.enabled ? await startConfiguredSandbox(config, log) : undefined;
  try {
    const client = openConnection(
      config,
      log,
      clock,
      undefined,
      sandbox && clientOptionsFromSandbox(sandbox),
    );
    return { client, sandbox };
  } catch (err) {
    await sandbox?.stop();
    throw err;
  }
}
