/**
 * `docex-agent returns retry [--config <file>]`: proofs whose download failed wait for their saved
 * backoff (minutes, growing); this makes them due now. It writes the returns store beside a running
 * agent (SQLite WAL, or PostgreSQL), whose follower takes them at its next pass (within seconds).
 */
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerReturnsCommand(program: Command): void {
  const returns = program.command('returns').description('the return path: proofs and statuses of sent jobs');
  returns
    .command('retry')
    .description('download now the proofs whose download failed, instead of after their backoff')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: { config: string }) => {
      const [
        { journalLocationOf, loadConfig },
        { openReturnsStore },
        { isDocexError },
        { systemClock },
        { READ_ONLY_SECRETS },
      ] = await Promise.all([
        import('../config/index.js'),
        import('../returns/open-stores.js'),
        import('../core/errors.js'),
        import('../core/clock.js'),
        import('./read-only.js'),
      ]);
      try {
        const { config } = loadConfig(opts.config, { secretsOnlyUnder: READ_ONLY_SECRETS['returns retry'] });
        const store = await openReturnsStore(journalLocationOf(config), config.stateDir, systemClock);
        try {
          const n = await store.retryFailedDocumentsNow(Date.now());
          process.stdout.write(
            `${n} failed proof download(s) due now; a running agent takes them within seconds\n`,
          );
        } finally {
          await store.close();
        }
      } catch (err) {
        process.stderr.write(
          `docex-agent returns retry: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
        );
        process.exitCode = 2;
      }
    });
}
