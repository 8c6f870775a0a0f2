import type { Dispatcher } from 'undici';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { tokenResponseSchema } from '../domain/wire.js';
import { API_ERROR_CODES, ApiError, isApiError, type TlsExplainer } from './errors.js';
import { answerError, exchange, parseJsonText } from './exchange.js';
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
}

interface CachedToken {
  value: string;
  expiresAt: number;
  refreshAt: number;
}

const ROUTE = '/oauth2/token';

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

  async getToken(signal?: AbortSignal): Promise<string> {
    const now = this.options.clock.now();
    if (this.cached && now < this.cached.refreshAt) return this.cached.value;
    if (!this.inFlight) {
      this.inFlight = this.fetchToken(signal).finally(() => {
        this.inFlight = undefined;
      });
    }
    return (await this.inFlight).value;
  }

  /**
   * Drops the cached token after a 401, so the next getToken asks the server. Given the token
   * that was refused, a token fetched since by a concurrent caller is kept.
   */
  invalidate(refused?: string): void {
    if (refused === undefined || this.cached?.value === refused) this.cached = undefined;
  }

  private async fetchToken(signal?: AbortSignal): Promise<CachedToken> {
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
        retryable: true,
        ...(signal ? { signal } : {}),
        ...(this.options.sleep ? { sleep: this.options.sleep } : {}),
      },
      async () => {
        const raw = await exchange(
          this.options.dispatcher,
          {
            url: joinUrl(this.options.authUrl, ROUTE),
            method: 'POST',
            route: ROUTE,
            headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
            body,
            ...(signal ? { signal } : {}),
          },
          this.options.explainTls,
        );
        if (raw.status < 200 || raw.status > 299) {
          throw answerError(raw, 'POST', ROUTE, clock.now(), API_ERROR_CODES.authToken);
        }
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
