/**
 * `docex-agent status <path|jobId>`: the options here; the journal reader (status-runner.ts) is
 * loaded when the command runs, so the CLI entry stays small.
 */
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status <nameOrPathOrJobId>')
    .description(
      'what the agent knows of a file (bare name, drop, archived or error path) or a job (id): journal history, sending events, proofs; a file still in a drop folder with its mode, owner and what keeps it there',
    )
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (query: string, opts: { config: string }) => {
      const { statusCommand } = await import('./status-runner.js');
      await statusCommand(query, opts);
    });
}
