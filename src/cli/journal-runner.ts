/**
 * `docex-agent journal copy --to postgres://user@host:port/db [--config <file>] [--password-env
 * NAME] [--sslmode mode]`: the SQLite stores of the configuration's state folder (journal.sqlite,
 * and returns.sqlite and inbox.sqlite when they exist) copied into an empty PostgreSQL database
 * (src/journal/postgres/copy.ts does the copy, src/returns/postgres/copy.ts adds the return path's
 * stores; this reads the options and prints). The password never comes in the URL (refused, as the config refuses it): from
 * --password-env, or journal.password when --to is the config's journal.url, whose TLS settings
 * then apply too. Nothing printed names a password or an upload URL.
 */
import path from 'node:path';
import { type AgentConfig, JOURNAL_FILE, journalLocationOf, loadConfig } from '../config/index.js';
import { DocexError, isDocexError } from '../core/errors.js';
import { describeLocation, type PostgresConnection, type PostgresTls } from '../journal/index.js';
import type { CopyCount } from '../journal/postgres/index.js';
import { INBOX_FILE } from '../returns/inbox-store.js';
import { RETURNS_FILE } from '../returns/store.js';
import { type CliIo, processIo } from './output/cli-io.js';
import { type ProgressLine, progressLine } from './output/progress.js';
import { READ_ONLY_SECRETS } from './read-only.js';

export interface JournalCliDeps {
  io?: CliIo;
  /** Where --password-env and the config's ${env:} are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface JournalCopyOptions {
  to: string;
  config: string;
  passwordEnv?: string;
  sslmode?: PostgresTls['mode'];
}

const usage = (message: string) => new DocexError('DOCEX_CLI_USAGE', message);

/** The --to URL, checked: postgres:// or postgresql://, readable, and no password in it. */
export function targetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usage('--to must be a postgres://user@host:port/database URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw usage(`--to must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  if (url.password !== '') {
    url.password = '';
    throw usage(
      `--to ${url.toString()} carries a password: leave it out of the URL (it would show in the process list and the shell history); give it with --password-env NAME, or as journal.password in the configuration when --to is its journal.url`,
    );
  }
  return url;
}

/** Two URLs name the same database (postgres:// and postgresql:// alike). */
function sameDatabase(a: URL, b: string): boolean {
  try {
    const norm = (u: URL) => {
      const copy = new URL(u.toString());
      return `${copy.username}@${copy.host}${copy.pathname}${copy.search}`;
    };
    return norm(a) === norm(new URL(b));
  } catch {
    return false;
  }
}

/** Where the copy goes, with what: the config's journal settings when --to is its journal.url. */
export function copyTarget(
  config: AgentConfig,
  opts: JournalCopyOptions,
  env: NodeJS.ProcessEnv,
): PostgresConnection {
  const url = targetUrl(opts.to);
  let password: string | undefined;
  if (opts.passwordEnv !== undefined) {
    password = env[opts.passwordEnv];
    if (password === undefined || password === '') {
      throw usage(`--password-env ${opts.passwordEnv}: that environment variable is not set or empty`);
    }
  }
  const configured = config.journal.url;
  if (configured !== undefined && sameDatabase(url, configured)) {
    const location = journalLocationOf(config);
    if (location.kind !== 'postgres')
      throw new DocexError('DOCEX_INTERNAL', 'journal.url without a location');
    if (opts.sslmode !== undefined && opts.sslmode !== config.journal.sslmode) {
      throw usage(
        `--sslmode ${opts.sslmode} contradicts journal.sslmode ${config.journal.sslmode}: --to is the configuration's journal.url, whose TLS settings apply; drop --sslmode or change the configuration`,
      );
    }
    return {
      ...location.connection,
      url: opts.to,
      ...(password !== undefined ? { password } : {}),
    };
  }
  return {
    url: opts.to,
    ...(password !== undefined ? { password } : {}),
    tls: { mode: opts.sslmode ?? 'verify-full' },
    poolSize: 1,
    timeoutMs: config.journal.timeoutMs,
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/** `100,000 items (100,000 files, 0 payload rows)`. */
function formatCount(c: CopyCount): string {
  const parts = c.parts ? ` (${c.parts.map(formatCount).join(', ')})` : '';
  return `${count(c.n)} ${c.label}${parts}`;
}

/** The `journal copy` command, loaded when it runs. */
export async function journalCopyCommand(opts: JournalCopyOptions, deps: JournalCliDeps = {}): Promise<void> {
  const io: CliIo = deps.io ?? processIo();
  const env = deps.env ?? process.env;
  let progress: ProgressLine | undefined;
  try {
    // The URL first: a password in it is refused before anything else is read or printed.
    targetUrl(opts.to);
    const { config } = loadConfig(opts.config, { env, secretsOnlyUnder: READ_ONLY_SECRETS['journal copy'] });
    const connection = copyTarget(config, opts, env);
    const journalFile = path.join(config.stateDir, JOURNAL_FILE);
    const { copyStateToPostgres } = await import('../returns/postgres/copy.js');
    io.stdout.write(
      `journal copy: ${journalFile} -> ${describeLocation({ kind: 'postgres', connection })}\n`,
    );
    let table = '';
    const result = await copyStateToPostgres({
      stateDir: config.stateDir,
      sources: {
        journal: journalFile,
        returns: path.join(config.stateDir, RETURNS_FILE),
        inbox: path.join(config.stateDir, INBOX_FILE),
      },
      connection,
      onProgress: (p) => {
        if (p.table !== table) {
          progress?.end();
          table = p.table;
          progress = progressLine(io.stderr, {
            label: `copying ${p.table}`,
            unit: 'items',
            noun: 'rows',
            total: p.total,
          });
        }
        progress?.update(p.copied);
      },
    }).finally(() => progress?.end());
    for (const store of result.stores) {
      io.stdout.write(
        `copied ${path.basename(store.file)} (schema version ${store.schemaVersion}): ${store.counts.map(formatCount).join(', ')}\n`,
      );
    }
    for (const store of result.absent) {
      io.stdout.write(
        `no ${path.basename(store.file)} in ${path.dirname(store.file)}: nothing to copy (the agent creates it on PostgreSQL when it needs it)\n`,
      );
    }
    const files = result.stores.map((s) => path.basename(s.file));
    const left =
      files.length === 1 ? `${files[0]} is` : `${files.slice(0, -1).join(', ')} and ${files.at(-1)} are`;
    io.stdout.write(
      `done in ${(result.elapsedMs / 1000).toFixed(1)} s, in one transaction\n` +
        `next: set journal.url to ${result.location} (and journal.password) in the configuration, run docex-agent check, then start the agent; ${left} left as ${files.length === 1 ? 'it was' : 'they were'}\n`,
    );
    io.setExitCode(0);
  } catch (err) {
    io.stderr.write(
      `docex-agent journal copy: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
    );
    io.setExitCode(isDocexError(err, 'DOCEX_CLI_USAGE') ? 2 : 1);
  }
}
