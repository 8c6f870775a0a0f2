import type { Logger } from '../core/logger.js';
import { unknownValue } from '../domain/wire.js';

/**
 * Logs each unrecognised enum value once per field: the service may add a status before we do,
 * and that must be visible without flooding the log or failing the call.
 */
export class UnknownValueReporter {
  private readonly seen = new Set<string>();

  constructor(private readonly log: Logger) {}

  check(field: string, value: string | undefined, known: readonly string[]): void {
    const unknown = unknownValue(value, known);
    if (unknown === undefined) return;
    const key = `${field}\u0000${unknown}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.log.warn({ field, value: unknown }, 'unrecognised value from the service');
  }
}
