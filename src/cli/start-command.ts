/**
 * `docex-agent start --config <file>`: the options here; the agent (start-runner.ts) is loaded
 * when the command runs, so the CLI entry stays small for every other command.
 */
import type { Command } from 'commander';

export const DEFAULT_CONFIG_FILE = './config/agent.yaml';

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run the agent: watch the drop folders and submit every complete file exactly once')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: { config: string }) => {
      const { runStart } = await import('./start-runner.js');
      const { ignoreReloadSignal } = await import('./signals.js');
      process.exitCode = await runStart(opts.config);
      ignoreReloadSignal();
    });
}
