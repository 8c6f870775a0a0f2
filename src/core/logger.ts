import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Every path where a secret can appear in a log object. Redaction is the second line of defence:
 * the first is never logging credentials, headers or pre-signed URLs at all.
 */
export const REDACT_PATHS = [
  'secret',
  'clientSecret',
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
  'url',
  'authorization',
  '["x-api-key"]',
  '*.secret',
  '*.clientSecret',
  '*.apiKey',
  '*.password',
  '*.passphrase',
  '*.privateKey',
  '*.clientKeyPem',
  '*.keyPem',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.fileUploadUrl',
  '*.authorization',
  '*["x-api-key"]',
  // Two levels down, e.g. `{ config: { service: { clientSecret } } }` or `req.headers.authorization`.
  '*.*.secret',
  '*.*.clientSecret',
  '*.*.apiKey',
  '*.*.password',
  '*.*.privateKey',
  '*.*.token',
  '*.*.authorization',
  '*.*["x-api-key"]',
  'credentials.*',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      name: options.name ?? 'docex-agent',
      level: options.level ?? process.env['DOCEX_LOG_LEVEL'] ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that drops everything, for unit tests of code that logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
