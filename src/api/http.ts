/**
 * The two parts of undici the clients use, required without undici's index: the index loads
 * fetch, WebSocket, EventSource, the HTTP caches and the mocks too, megabytes of an idle agent's
 * resident set (figures: docs/benchmarks.md). `request` does what undici's top-level `request`
 * does with an explicit dispatcher: URL to origin and path, then undici's request API on it.
 * test/api/http.test.ts pins both paths, so an undici upgrade that moves them fails there.
 */
import { createRequire } from 'node:module';
import type { Dispatcher, Agent as UndiciAgent } from 'undici';

const require = createRequire(import.meta.url);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;

type RequestApi = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
const requestApi = require('undici/lib/api/api-request.js') as RequestApi;

export type RequestInit = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher };

/** One request on `dispatcher` (never the global one); the answer's body is a stream to consume. */
export function request(url: string | URL, init: RequestInit): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...options } = init;
  const target = typeof url === 'string' ? new URL(url) : url;
  return requestApi.call(dispatcher, {
    ...options,
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
  });
}
