/**
 * `docex-agent check`: the options here; the checks (check-runner.ts) are loaded when the command
 * runs, so the CLI entry stays small.
 */
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description(
      'the doctor: configuration, key permissions, certificate and expiry, TLS handshake, token, API key, folder workflows, folders writable, free disk',
    )
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: { config: string }) => {
      const { checkCommand } = await import('./check-runner.js');
      await checkCommand(opts);
    });
}
