/**
 * The service connection: the configured one, or the built-in sandbox (sandbox.enabled), which the
 * command line starts in this process and hands in as client options: the agent does not know it.
 */
import { type ApiObserver, DocexClient, type DocexClientOptions } from '../api/index.js';
import { type AgentConfig, readTlsMaterial } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/** How to reach a service: everything of a client's options but its logger and clock. */
export type ServiceClientOptions = Omit<DocexClientOptions, 'log' | 'clock'>;

/**
 * The built-in sandbox as the agent sees it: the command line starts it when the agent asks (after
 * the state lock), the agent connects with these options and stops it with its other parts.
 */
export interface SandboxService {
  clientOptions: ServiceClientOptions;
  stop(): Promise<void>;
}

export function clientOptionsFromService(service: NonNullable<AgentConfig['service']>): ServiceClientOptions {
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

/** The client of the built-in sandbox (`sandbox`, when enabled and started), else of `service`. */
export function openConnection(
  config: AgentConfig,
  log: Logger,
  clock?: Clock,
  observer?: ApiObserver,
  sandbox?: ServiceClientOptions,
): DocexClient {
  let options: ServiceClientOptions;
  if (config.sandbox.enabled && sandbox) {
    options = sandbox;
  } else if (config.sandbox.enabled) {
    throw new DocexError('DOCEX_CONFIG_INVALID', 'sandbox.enabled: the built-in sandbox was not started');
  } else if (config.service) {
    options = clientOptionsFromService(config.service);
  } else {
    throw new DocexError('DOCEX_CONFIG_INVALID', 'no service connection: set service, or sandbox.enabled');
  }
  return new DocexClient({
    ...options,
    log: log.child({ part: 'api' }),
    ...(clock ? { clock } : {}),
    ...(observer ? { observer } : {}),
  });
}
