import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';
import { redactDeep } from './log-redact.js';

export type { Logger } from 'pino';

/**
 * Paths fast-redact censors (top-level names only: its wildcards cost microseconds per path and
 * line). The walk in log-redact.ts covers the same names at any depth; these stay as a second
 * line of defence. The first is never logging credentials, headers or pre-signed URLs at all.
 */
export const REDACT_PATHS = [
  'secret',
  'secrets',
  'clientSecret',
  'client_secret',
  'apiKey',
  'password',
  'passphrase',
  'privateKey',
  'clientKeyPem',
  'keyPem',
  'key',
  'signature',
  'token',
  'accessToken',
  'access_token',
  'fileUploadUrl',
  'uploadUrl',
  'downloadUrl',
  'url',
  'authorization',
  'cookie',
  '["x-api-key"]',
  '["webhook-signature"]',
  'credentials.*',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  destination?: DestinationStream;
  /** `auto` (default): pretty text when standard output is a terminal and no destination is given. */
  format?: 'auto' | 'json' | 'pretty';
}

/** Whether lines are written as pretty text rather than JSON. */
export function wantsPretty(options: LoggerOptions, stdoutIsTty = process.stdout.isTTY === true): boolean {
  const format = options.format ?? 'auto';
  if (format === 'auto') return stdoutIsTty && options.destination === undefined;
  return format === 'pretty';
}

/**
 * pino-pretty as a stream in this thread, loaded only when wanted (a service writing JSON to
 * journald never loads it). Redaction happens before it, in pino.
 */
function prettyStream(destination: DestinationStream | undefined): DestinationStream {
  const pretty = createRequire(import.meta.url)('pino-pretty') as (o: object) => DestinationStream;
  return pretty({
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    ...(destination ? { destination } : {}),
  });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      name: options.name ?? 'docex-agent',
      level: options.level ?? process.env['DOCEX_LOG_LEVEL'] ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Every depth, arrays and error fields included (see log-redact.ts).
      formatters: { log: (obj) => redactDeep(obj) },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    wantsPretty(options)
      ? prettyStream(options.destination)
      : (options.destination ?? pino.destination({ dest: 1, sync: false })),
  );
}

/** A logger that drops everything, for unit tests of code that logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
