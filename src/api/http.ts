/**
 * The parts of undici the clients use, from its public entry point only: undici's own files are
 * no API and may move in any release (what leaving its index out was worth: docs/benchmarks.md).
 */
import { type Dispatcher, request as undiciRequest } from 'undici';

export { Agent } from 'undici';

export type RequestInit = Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher };

/** One request on `dispatcher` (never the global one); the answer's body is a stream to consume. */
export function request(url: string | URL, init: RequestInit): Promise<Dispatcher.ResponseData> {
  return undiciRequest(url, init);
}
