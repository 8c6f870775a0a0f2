/**
 * `docex-agent returns retry [--config <file>]`: proofs whose download failed wait for their saved
 * backoff (minutes, growing); this makes them due now. It writes returns.sqlite beside a running
 * agent (SQLite WAL), whose follower takes them at its next pass (within seconds).
 */
import path from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerReturnsCommand(program: Command): void {
  const returns = program.command('returns').description('the return path: proofs and statuses of sent jobs');
  returns
    .command('retry')
    .description('download now the proofs whose download failed, instead of after their backoff')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: { config: string }) => {
      const [{ loadConfig }, { RETURNS_FILE, ReturnsStore }, { isDocexError }] = await Promise.all([
        import('../config/index.js'),
        import('../returns/store.js'),
        import('../core/errors.js'),
      ]);
      try {
        const { config } = loadConfig(opts.config);
        const store = ReturnsStore.open(path.join(config.stateDir, RETURNS_FILE), Date.now());
        try {
          const n = store.retryFailedDocumentsNow(Date.now());
          process.stdout.write(
            `${n} failed proof download(s) due now; a running agent takes them within seconds\n`,
          );
        } finally {
          store.close();
        }
      } catch (err) {
        process.stderr.write(
          `docex-agent returns retry: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
        );
        process.exitCode = 2;
      }
    });
}
