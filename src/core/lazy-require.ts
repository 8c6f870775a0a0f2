/**
 * A CommonJS package loaded the first time it is used rather than when the agent starts: the
 * parsers of file kinds a configuration may never see (XML, CSV, ZIP) and the webhook signature
 * library stay out of an idle agent's memory. Synchronous, so the callers keep their signatures.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function lazyRequire<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= require(name) as T;
    return loaded;
  };
}
