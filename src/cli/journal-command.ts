/**
 * `docex-agent journal copy --to postgres://…` (the journal, returns and inbox stores): the options here; the copy (journal-runner.ts, and
 * the PostgreSQL driver behind it) is loaded when the command runs.
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { JournalCliDeps, JournalCopyOptions } from './journal-runner.js';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export const SSL_MODES = ['disable', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

function parseSslMode(text: string): SslMode {
  if (!(SSL_MODES as readonly string[]).includes(text)) {
    throw new InvalidArgumentError(`not an sslmode: ${text} (${SSL_MODES.join(', ')})`);
  }
  return text as SslMode;
}

export function registerJournalCommand(program: Command, deps: JournalCliDeps = {}): void {
  const journal = program
    .command('journal')
    .description('the journal: the exactly-once record of every file taken');
  journal
    .command('copy')
    .description(
      "copy a stopped agent's SQLite journal (stateDir/journal.sqlite), and its returns.sqlite and inbox.sqlite when they exist, into an empty PostgreSQL database, in one transaction",
    )
    .requiredOption('--to <url>', 'the target, postgres://user@host:port/database (no password in it)')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .option(
      '--password-env <NAME>',
      "the environment variable holding the user's password (default: journal.password, when --to is journal.url)",
    )
    .option(
      '--sslmode <mode>',
      `TLS towards the target when --to is not the config's journal.url (whose TLS settings apply): ${SSL_MODES.join(', ')}; default verify-full`,
      parseSslMode,
    )
    .action(async (opts: JournalCopyOptions) => {
      const { journalCopyCommand } = await import('./journal-runner.js');
      await journalCopyCommand(opts, deps);
    });
}
