/**
 * Every line the running agent writes is a JSON log line, even the last one: an uncaught error or
 * an unhandled rejection is logged (fatal, with the error) before the process exits, and plain
 * text that third-party code writes to standard error (node-cron, a parser's console.warn) becomes
 * a warn line. V8's own messages written natively to fd 2 (a worker's heap report) cannot be
 * caught from JavaScript.
 */
import type { Logger } from '../core/logger.js';

export const FATAL_EXIT_CODE = 70;

export interface FatalLogging {
  /** What the process handlers call; exported for tests. */
  onError(err: unknown, origin: string): void;
  /** Removes the handlers and gives standard error back. */
  restore(): void;
}

export function installFatalLogging(
  log: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): FatalLogging {
  const onError = (err: unknown, origin: string) => {
    log.fatal(
      { err, origin, code: (err as { code?: unknown } | undefined)?.code },
      'uncaught error: the agent stops',
    );
    log.flush();
    exit(FATAL_EXIT_CODE);
  };
  const onException = (err: Error, origin: string) => onError(err, origin);
  const onRejection = (reason: unknown) => onError(reason, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')).trimEnd();
    if (text !== '') log.warn({ stderr: text.slice(0, 4000) }, 'standard error output');
    const done = rest.find((r): r is () => void => typeof r === 'function');
    done?.();
    return true;
  }) as typeof process.stderr.write;
  return {
    onError,
    restore() {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
      process.stderr.write = write;
    },
  };
}
