import type { Dispatcher } from 'undici';
import { type Clock, systemClock } from '../core/clock.js';
import { type Logger, silentLogger } from '../core/logger.js';
import { ApiCaller } from './api-caller.js';
import type { TlsExplainer } from './errors.js';
import type { ApiObserver } from './observer.js';
import { type RetryPolicy, retryPolicy } from './retry.js';
import type { Sleep } from './retry-loop.js';
import { TokenProvider } from './token-provider.js';

/** The options DocexClient and AdminClient share: the OAuth2 client, the API key and the injectables. */
export interface CallerSettings {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  clock?: Clock;
  log?: Logger;
  retry?: Partial<RetryPolicy>;
  tokenRefreshBeforeMs?: number;
  managedCompanyId?: string;
  sleep?: Sleep;
  /** Told of requests, token fetches and uploads (metrics). */
  observer?: ApiObserver;
}

export interface CallerWiring {
  tokens: TokenProvider;
  caller: ApiCaller;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  sleep: Sleep | undefined;
}

/**
 * A client's token provider and API caller over one dispatcher (the caller picks and owns it),
 * with the defaults both clients use for the clock, the logger and the retry policy.
 */
export function wireCaller(
  settings: CallerSettings,
  dispatcher: Dispatcher,
  explainTls?: TlsExplainer,
): CallerWiring {
  const clock = settings.clock ?? systemClock;
  const log = settings.log ?? silentLogger();
  const policy = retryPolicy(settings.retry);
  const sleep = settings.sleep;
  const tokens = new TokenProvider({
    authUrl: settings.authUrl,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    dispatcher,
    clock,
    log,
    policy,
    ...(settings.tokenRefreshBeforeMs === undefined
      ? {}
      : { refreshBeforeMs: settings.tokenRefreshBeforeMs }),
    ...(sleep ? { sleep } : {}),
    ...(explainTls ? { explainTls } : {}),
    ...(settings.observer ? { observer: settings.observer } : {}),
  });
  const caller = new ApiCaller({
    apiUrl: settings.apiUrl,
    apiKey: settings.apiKey,
    tokens,
    dispatcher,
    clock,
    log,
    policy,
    ...(settings.managedCompanyId ? { defaultManagedCompanyId: settings.managedCompanyId } : {}),
    ...(sleep ? { sleep } : {}),
    ...(explainTls ? { explainTls } : {}),
    ...(settings.observer ? { observer: settings.observer } : {}),
  });
  return { tokens, caller, clock, log, policy, sleep };
}
