/**
 * A configuration safe to print (`docex-agent config show`, start-up logs): secret values are
 * replaced, everything else is kept so the output still explains what the agent will do.
 */
import { REDACTED, SECRET_CONFIG_KEYS } from '../core/log-redact.js';

export { REDACTED };

function redact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(redact);
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        SECRET_CONFIG_KEYS.has(key) && value !== undefined && value !== null ? REDACTED : redact(value),
      ]),
    );
  }
  return node;
}

/** A deep copy of the configuration with every secret value replaced by `[redacted]`. */
export function redactedConfig<T>(config: T): T {
  return redact(config) as T;
}
