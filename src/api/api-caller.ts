import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { parseJsonText } from './answer.js';
import { API_ERROR_CODES, ApiError, type TlsExplainer } from './errors.js';
import { exchange } from './http.js';
import type { ApiObserver } from './observer.js';
import { buildQuery, fillRoute, joinUrl, type Query } from './query.js';
import type { RetryPolicy } from './retry.js';
import { type AttemptListener, type AttemptPace, type Sleep, withRetry } from './retry-loop.js';
import type { TokenProvider } from './token-provider.js';

/** Options every operation takes. */
export interface CallOptions {
  /** Acts for this managed company (x-managed-company-id); overrides the client's default. */
  managedCompanyId?: string;
  signal?: AbortSignal;
  /** The caller's logger (with its folder, file and job fields) for this call's lines and retries. */
  log?: Logger;
  /** Told of each attempt's outcome (429, 503, Retry-After): how a caller paces itself. */
  onAttempt?: AttemptListener;
  /** Each attempt waits its turn in the service host's pace (api/host-pace.ts) first. */
  pace?: AttemptPace;
}

export interface CallSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Route template, e.g. `/jobs/{id}`: what errors and logs show. */
  route: string;
  params?: Record<string, string>;
  query?: Query;
  body?: unknown;
  /** Defaults to true for GET only: anything that creates or changes is sent once. */
  retryable?: boolean;
  options?: CallOptions | undefined;
}

export interface ApiCallerDeps {
  apiUrl: string;
  apiKey: string;
  tokens: TokenProvider;
  dispatcher: Dispatcher;
  clock: Clock;
  log: Logger;
  policy: RetryPolicy;
  defaultManagedCompanyId?: string;
  sleep?: Sleep;
  explainTls?: TlsExplainer;
  observer?: ApiObserver;
}

/** Sends one Interface A operation with all three auth layers, retries and error mapping. */
export class ApiCaller {
  constructor(private readonly deps: ApiCallerDeps) {}

  /** The answer parsed with `schema`; a mismatch is DOCEX_RESPONSE_INVALID. */
  async call<S extends z.ZodType>(spec: CallSpec, schema: S): Promise<z.output<S>> {
    const json = await this.json(spec);
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ApiError(API_ERROR_CODES.responseInvalid, `${spec.method} ${spec.route}: unexpected answer`, {
        method: spec.method,
        route: spec.route,
        problem: {
          title: 'answer does not match the expected shape',
          errors: parsed.error.issues.slice(0, 10).map((issue) => ({
            field: issue.path.join('.'),
            message: issue.message,
          })),
        },
      });
    }
    return parsed.data;
  }

  /** The answer's JSON, or undefined for an empty body. */
  async json(spec: CallSpec): Promise<unknown> {
    const { clock } = this.deps;
    const log = spec.options?.log ?? this.deps.log;
    const signal = spec.options?.signal;
    const url = joinUrl(this.deps.apiUrl, fillRoute(spec.route, spec.params), buildQuery(spec.query));
    const managed = spec.options?.managedCompanyId ?? this.deps.defaultManagedCompanyId;
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    let refreshedAfter401 = false;

    const once = async (): Promise<unknown> => {
      const token = await this.deps.tokens.getToken(signal);
      const answer = await exchange(this.deps, {
        url,
        method: spec.method,
        route: spec.route,
        log,
        headers: {
          accept: 'application/json',
          authorization: `Bearer ${token}`,
          'x-api-key': this.deps.apiKey,
          ...(managed ? { 'x-managed-company-id': managed } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body,
        signal,
        secrets: [this.deps.apiKey, token],
      });
      if (answer.status === 401 && !refreshedAfter401) {
        // An expired or revoked token: one more try with a token fresh from the server.
        refreshedAfter401 = true;
        this.deps.tokens.invalidate(token);
        return once();
      }
      if (answer.status < 200 || answer.status > 299) throw answer.error();
      try {
        return parseJsonText(answer.text);
      } catch {
        throw new ApiError(
          API_ERROR_CODES.responseInvalid,
          `${spec.method} ${spec.route}: answer is not JSON`,
          { method: spec.method, route: spec.route, status: answer.status, text: answer.text },
        );
      }
    };

    return withRetry(
      {
        policy: this.deps.policy,
        clock,
        log,
        method: spec.method,
        route: spec.route,
        retryable: spec.retryable ?? spec.method === 'GET',
        ...(signal ? { signal } : {}),
        ...(this.deps.sleep ? { sleep: this.deps.sleep } : {}),
        ...(spec.options?.onAttempt ? { onAttempt: spec.options.onAttempt } : {}),
        ...(spec.options?.pace ? { pace: spec.options.pace } : {}),
      },
      once,
    );
  }
}
