/**
 * Whether each output target can be written: every write reports here (through `watch`), a
 * failure marks the output failing until a later write to it succeeds. /readyz names the failing
 * ones; /metrics counts the failures.
 */
import type { Clock } from '../core/clock.js';
import type { OutputTarget } from './types.js';

export interface FailingOutput {
  /** The config place: `returns.proofs.target`, `peppolInbox.target`. */
  output: string;
  description: string;
  since: number;
  /** Code and message of the last failure (no secret: targets' errors carry none). */
  reason: string;
}

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** `CODE: message (CAUSE_CODE)`: the target's error and the system error behind it (ENOSPC, EACCES). */
function reasonOf(err: unknown): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  const cause = codeOf((err as { cause?: unknown } | undefined)?.cause);
  return `${code && !message.includes(code) ? `${code}: ` : ''}${message}${cause ? ` (${cause})` : ''}`;
}

export class OutputHealth {
  private readonly failingNow = new Map<string, FailingOutput>();
  private readonly failureCounts = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  /** The same target, its writes reported under `output`. */
  watch(output: string, target: OutputTarget): OutputTarget {
    const write: OutputTarget['write'] = async (relPath, content) => {
      try {
        await target.write(relPath, content);
      } catch (err) {
        this.failureCounts.set(output, (this.failureCounts.get(output) ?? 0) + 1);
        const since = this.failingNow.get(output)?.since ?? this.clock.now();
        this.failingNow.set(output, {
          output,
          description: target.description,
          since,
          reason: reasonOf(err),
        });
        throw err;
      }
      this.failingNow.delete(output);
    };
    const sizeOf = target.sizeOf?.bind(target);
    const removeOlderThan = target.removeOlderThan?.bind(target);
    return {
      description: target.description,
      write,
      exists: (relPath) => target.exists(relPath),
      ...(sizeOf ? { sizeOf } : {}),
      ...(removeOlderThan ? { removeOlderThan } : {}),
      close: () => target.close(),
    };
  }

  /** Outputs whose last write failed. */
  failing(): FailingOutput[] {
    return [...this.failingNow.values()];
  }

  /** Failed writes since start, by output. */
  failures(): Record<string, number> {
    return Object.fromEntries(this.failureCounts);
  }
}
