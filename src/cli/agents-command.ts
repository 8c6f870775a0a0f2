/**
 * `docex-agent agents [--config <file>]`: the options here; the reader (agents-runner.ts, and the
 * PostgreSQL driver behind it) is loaded when the command runs.
 */
import type { Command } from 'commander';
import type { AgentsCliDeps, AgentsOptions } from './agents-runner.js';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerAgentsCommand(program: Command, deps: AgentsCliDeps = {}): void {
  program
    .command('agents')
    .description(
      'the agents sharing the PostgreSQL journal: host, pid, version, when each started and was last seen (by the database’s clock), alive, dead or stopped',
    )
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: AgentsOptions) => {
      const { agentsCommand } = await import('./agents-runner.js');
      await agentsCommand(opts, deps);
    });
}
