import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../../src/core/logger.js';

/** A real pino logger writing to memory; `lines()` parses what it wrote. */
export function captureLogger(level = 'debug'): {
  log: Logger;
  raw: () => string;
  lines: () => Record<string, unknown>[];
} {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const log = createLogger({ level, destination });
  const raw = () => chunks.join('');
  return {
    log,
    raw,
    lines: () =>
      raw()
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
