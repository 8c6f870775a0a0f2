import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type DestinationStream, type Level, type Logger, pino } from 'pino';
import { serializeError } from './log-errors.js';
import { REDACTED, redactDeep } from './log-redact.js';

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
  /**
   * Start each JSON line with its syslog priority (`<3>` for error …), which journald reads as the
   * entry's level. Default: when standard output is the journal's stream (systemd's JOURNAL_STREAM).
   */
  syslogPrefix?: boolean;
}

/** Syslog priorities (RFC 5424) of pino's levels: what `journalctl -p` filters on. */
export const SYSLOG_PRIORITY: Record<Level, number> = {
  fatal: 2, // crit
  error: 3, // err
  warn: 4, // warning
  info: 6, // info
  debug: 7,
  trace: 7,
};

/**
 * Whether standard output is connected to the journal: systemd sets JOURNAL_STREAM to the
 * `device:inode` of that stream, which a redirection (`> file`, a pipe) no longer matches.
 */
export function stdoutIsJournal(env: NodeJS.ProcessEnv = process.env, fd = 1): boolean {
  const stream = env['JOURNAL_STREAM'];
  if (!stream) return false;
  try {
    const st = fstatSync(fd);
    return stream === `${st.dev}:${st.ino}`;
  } catch {
    return false;
  }
}

/**
 * One stream per level (pino's multistream with dedupe: each line goes to the highest matching
 * one), each writing its `<N>` before the JSON line to the same destination.
 */
function syslogPrefixed(destination: DestinationStream): DestinationStream {
  const streams = (Object.keys(SYSLOG_PRIORITY) as Level[]).map((level) => {
    const prefix = `<${SYSLOG_PRIORITY[level]}>`;
    return { level, stream: { write: (line: string) => destination.write(prefix + line) } };
  });
  // log.flush() (before exit) reaches the destination, not the per-level wrappers.
  const flushable = destination as DestinationStream & { flush?: (cb?: (err?: Error) => void) => void };
  return Object.assign(pino.multistream(streams, { dedupe: true }), {
    flush: (cb?: (err?: Error) => void) => (flushable.flush ? flushable.flush(cb) : cb?.()),
  });
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
  let destination: DestinationStream;
  if (wantsPretty(options)) destination = prettyStream(options.destination);
  else {
    destination = options.destination ?? pino.destination({ dest: 1, sync: false });
    if (options.syslogPrefix ?? (options.destination === undefined && stdoutIsJournal())) {
      destination = syslogPrefixed(destination);
    }
  }
  return pino(
    {
      name: options.name ?? 'docex-agent',
      level: options.level ?? process.env['DOCEX_LOG_LEVEL'] ?? 'info',
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      formatters: {
        // "level":"warn", not 40: readable in the journal and in any log tool without a mapping.
        level: (label) => ({ level: label }),
        // Every depth, arrays and error fields included (see log-redact.ts).
        log: (obj) => redactDeep(obj),
      },
      // Expected errors as one short record without their stack (log-errors.ts).
      serializers: { err: serializeError },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/** A logger that drops everything, for unit tests of code that logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
