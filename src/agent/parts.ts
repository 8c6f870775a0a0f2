/**
 * The agent's parts (the zigbee2mqtt controller's extensions): each starts and stops one piece,
 * parts start in order and stop in reverse, and a start that fails stops what had started.
 */
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

export interface Part {
  readonly name: string;
  start(): Promise<void> | void;
  /** Undoes what start did, also when start failed half way. */
  stop(): Promise<void> | void;
}

export interface PartFailure {
  part: string;
  error: unknown;
}

/**
 * Starts the parts in order and answers them. When one fails, it and those before it are stopped
 * in reverse (failures to stop are logged) and its error is thrown.
 */
export async function startParts(parts: readonly Part[], log: Logger): Promise<Part[]> {
  const started: Part[] = [];
  for (const part of parts) {
    started.push(part);
    try {
      await part.start();
    } catch (err) {
      await stopParts(started, log);
      throw err;
    }
  }
  return started;
}

/** Stops the parts in reverse order (emptying the list), each even when one before it failed. */
export async function stopParts(parts: Part[], log: Logger): Promise<PartFailure[]> {
  const failures: PartFailure[] = [];
  for (const part of parts.splice(0).reverse()) {
    try {
      await part.stop();
    } catch (error) {
      failures.push({ part: part.name, error });
      log.error({ part: part.name, err: error }, 'part failed to stop');
    }
  }
  return failures;
}

/** What a part made at start; reading it before (a programming error) throws DOCEX_INTERNAL. */
export function madeBy<T>(part: string, value: T | undefined): T {
  if (value === undefined)
    throw new DocexError('DOCEX_INTERNAL', `the agent's ${part} is used before it started`);
  return value;
}

/** A part that opens one thing at start and closes it at stop (a lock, the journal, a client). */
export class Opened<T> implements Part {
  private opened: T | undefined;

  constructor(
    readonly name: string,
    private readonly open: () => Promise<T> | T,
    private readonly close: (value: T) => Promise<void> | void,
  ) {}

  get value(): T {
    return madeBy(this.name, this.opened);
  }

  async start(): Promise<void> {
    this.opened = await this.open();
  }

  async stop(): Promise<void> {
    if (this.opened !== undefined) await this.close(this.opened);
  }
}
