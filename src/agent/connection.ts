/**
 * The service connection: the configured one, or the built-in sandbox started in this process
 * (sandbox.enabled), whose credentials are taken directly.
 */
import { type ApiObserver, DocexClient, type DocexClientOptions } from '../api/index.js';
import { type AgentConfig, readTlsMaterial } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { RunningSandbox } from '../sandbox/index.js';

export interface Connection {
  client: DocexClient;
  sandbox: RunningSandbox | undefined;
}

export function clientOptionsFromService(
  service: NonNullable<AgentConfig['service']>,
): Omit<DocexClientOptions, 'log' | 'clock'> {
  return {
    apiUrl: service.apiUrl,
    authUrl: service.authUrl,
    clientId: service.clientId,
    clientSecret: service.clientSecret,
    apiKey: service.apiKey,
    tls: readTlsMaterial(service.tls),
    timeouts: service.timeouts,
    ...(service.managedCompanyId ? { managedCompanyId: service.managedCompanyId } : {}),
  };
}

export function clientOptionsFromSandbox(sandbox: RunningSandbox): Omit<DocexClientOptions, 'log' | 'clock'> {
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

export async function openConnection(
  config: AgentConfig,
  log: Logger,
  clock?: Clock,
  observer?: ApiObserver,
): Promise<Connection> {
  let sandbox: RunningSandbox | undefined;
  let options: Omit<DocexClientOptions, 'log' | 'clock'>;
  if (config.sandbox.enabled) {
    // Loaded only when enabled: the emulator (PKI, PDF, its servers) is most of a cold start's memory.
    const { startSandbox } = await import('../sandbox/index.js');
    sandbox = await startSandbox({
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
    options = clientOptionsFromSandbox(sandbox);
  } else if (config.service) {
    options = clientOptionsFromService(config.service);
  } else {
    throw new DocexError('DOCEX_CONFIG_INVALID', 'no service connection: set service, or sandbox.enabled');
  }
  const client = new DocexClient({
    ...options,
    log: log.child({ part: 'api' }),
    ...(clock ? { clock } : {}),
    ...(observer ? { observer } : {}),
  });
  return { client, sandbox };
}
