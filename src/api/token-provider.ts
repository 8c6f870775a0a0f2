import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { tokenResponseSchema } from '../domain/wire.js';
import { parseJsonText } from './answer.js';
import { API_ERROR_CODES, ApiError, isApiError, type TlsExplainer } from './errors.js';
import { exchange } from './http.js';
import { type ApiObserver, notify } from './observer.js';
import { joinUrl } from './query.js';
import type { RetryPolicy } from './retry.js';
import { type Sleep, withRetry } from './retry-loop.js';

export interface TokenProviderOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** The mTLS dispatcher: the token host takes the client certificate too. */
  dispatcher: Dispatcher;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  /** Refresh when less than this remains (MSAL renews 300 s ahead). */
  refreshBeforeMs?: number;
  sleep?: Sleep;
  /** Names a TLS alert behind a closed connection (see TlsDiagnostics). */
  explainTls?: TlsExplainer;
  /** Told of each token fetch (metrics). */
  observer?: ApiObserver;
}

interface CachedToken {
  value: string;
  expiresAt: number;
  refreshAt: number;
}

const ROUTE = '/oauth2/token';

/** After a failed early refresh, the next try waits this long (or half the remaining life). */
const EARLY_REFRESH_RETRY_MS = 30_000;

/** Rejects with the signal's reason when it aborts first; `shared` itself goes on. */
function raceAbort<T>(shared: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return shared;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    shared.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * OAuth2 client-credentials tokens: cached, renewed ahead of expiry, one request in flight shared
 * by every concurrent caller. There is no refresh token in this flow; renewing means asking again.
 */
export class TokenProvider {
  private cached: CachedToken | undefined;
  private inFlight: Promise<CachedToken> | undefined;
  private readonly refreshBeforeMs: number;

  constructor(private readonly options: TokenProviderOptions) {
    this.refreshBeforeMs = options.refreshBeforeMs ?? 300_000;
  }

  /**
   * A valid token. `signal` aborts this caller's wait only: the shared request carries no
   * caller's signal, so one caller giving up does not fail the others.
   */
  async getToken(signal?: AbortSignal): Promise<string> {
    const cached = this.cached;
    if (cached && this.options.clock.now() < cached.refreshAt) return cached.value;
    if (!this.inFlight) {
      this.inFlight = this.refresh().finally(() => {
        this.inFlight = undefined;
      });
    }
    return (await raceAbort(this.inFlight, signal)).value;
  }

  /**
   * Drops the cached token after a 401, so the next getToken asks the server. Given the token
   * that was refused, a token fetched since by a concurrent caller is kept.
   */
  invalidate(refused?: string): void {
    if (refused === undefined || this.cached?.value === refused) this.cached = undefined;
  }

  /**
   * A new token. An early refresh (the cached token still valid) gets one attempt, and when it
   * fails the cached token serves until it expires: a token endpoint outage shorter than the
   * refresh margin then costs nothing.
   */
  private async refresh(): Promise<CachedToken> {
    const { clock, log } = this.options;
    const early = this.cached !== undefined && clock.now() < this.cached.expiresAt;
    try {
      return await this.fetchToken(!early);
    } catch (err) {
      const current = this.cached;
      const now = clock.now();
      // Not after invalidate(): a token the API refused is not used again.
      if (!current || now >= current.expiresAt) throw err;
      const retryInMs = Math.min(EARLY_REFRESH_RETRY_MS, (current.expiresAt - now) / 2);
      this.cached = { ...current, refreshAt: now + retryInMs };
      log.warn(
        {
          code: (err as { code?: unknown })?.code,
          expiresInS: Math.round((current.expiresAt - now) / 1000),
          retryInS: Math.round(retryInMs / 1000),
        },
        'token refresh failed, keeping the cached token',
      );
      return this.cached;
    }
  }

  /** `retry` false: one attempt only (an early refresh, with a valid token to fall back on). */
  private async fetchToken(retry: boolean): Promise<CachedToken> {
    try {
      const token = await this.fetchTokenOnce(retry);
      notify(this.options.observer, 'tokenRefresh', { ok: true });
      return token;
    } catch (err) {
      notify(this.options.observer, 'tokenRefresh', { ok: false });
      throw err;
    }
  }

  private async fetchTokenOnce(retry: boolean): Promise<CachedToken> {
    const { clock, log } = this.options;
    const started = clock.now();
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: this.options.clientId,
      client_secret: this.options.clientSecret,
    }).toString();
    const answer = await withRetry(
      {
        policy: this.options.policy,
        clock,
        log,
        method: 'POST',
        route: ROUTE,
        retryable: retry,
        ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
      },
      async () => {
        const raw = await exchange(this.options, {
          url: joinUrl(this.options.authUrl, ROUTE),
          method: 'POST',
          route: ROUTE,
          log,
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body,
          secrets: [this.options.clientSecret],
        });
        if (raw.status < 200 || raw.status > 299) throw raw.error(API_ERROR_CODES.authToken);
        return raw;
      },
    ).catch((err: unknown) => {
      if (isApiError(err, API_ERROR_CODES.network)) {
        throw new ApiError(API_ERROR_CODES.authToken, `token endpoint unreachable: ${err.message}`, {
          method: 'POST',
          route: ROUTE,
          cause: err,
        });
      }
      throw err;
    });

    let parsed: ReturnType<typeof tokenResponseSchema.safeParse>;
    try {
      parsed = tokenResponseSchema.safeParse(parseJsonText(answer.text));
    } catch {
      parsed = tokenResponseSchema.safeParse(undefined);
    }
    if (!parsed.success) {
      throw new ApiError(API_ERROR_CODES.authToken, 'token endpoint answered without a usable token', {
        method: 'POST',
        route: ROUTE,
        status: answer.status,
      });
    }
    const lifetimeMs = parsed.data.expires_in * 1000;
    // A short-lived token is renewed at half its life rather than on every call.
    const margin = Math.min(this.refreshBeforeMs, lifetimeMs / 2);
    const token = {
      value: parsed.data.access_token,
      expiresAt: started + lifetimeMs,
      refreshAt: started + lifetimeMs - margin,
    };
    this.cached = token;
    log.info({ expiresInS: parsed.data.expires_in }, 'token refreshed');
    return token;
  }
}
