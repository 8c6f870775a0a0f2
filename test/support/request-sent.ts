import { subscribe, unsubscribe } from 'node:diagnostics_channel';

const SEND_HEADERS = 'undici:client:sendHeaders';

/**
 * Resolves once an HTTP client of this process (undici, which the agent's client and the tests'
 * requests use) has sent the headers of a request whose path starts with `pathPrefix`: from then
 * on that request is in flight, however loaded the machine. Call it before the request is made.
 */
export function requestSent(pathPrefix: string): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      const sent = (message as { request?: { path?: string } }).request?.path ?? '';
      if (!sent.startsWith(pathPrefix)) return;
      unsubscribe(SEND_HEADERS, onMessage);
      resolve();
    };
    subscribe(SEND_HEADERS, onMessage);
  });
}
