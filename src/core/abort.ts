import { setMaxListeners } from 'node:events';

/**
 * A controller whose signal is shared by every request in flight (each adds an abort listener):
 * past ten of them Node would warn of a leak that is not one.
 */
export function sharedAbortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
