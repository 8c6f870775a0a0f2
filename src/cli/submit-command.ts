/**
 * `docex-agent submit <file> --workflow <id>`: the options here; the submit itself
 * (submit-runner.ts) is loaded when the command runs, so the CLI entry stays small.
 */
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerSubmitCommand(program: Command): void {
  program
    .command('submit <file>')
    .description('submit one file to a workflow and wait for its upload (exit 0 only when uploaded)')
    .requiredOption('-w, --workflow <id>', 'workflow id')
    .option('-c, --config <file>', 'configuration file (a service: block is enough)', DEFAULT_CONFIG_FILE)
    .option('--allow-duplicate', 'send even if the same content was sent to this workflow before')
    .action(async (file: string, opts: { workflow: string; config: string; allowDuplicate?: boolean }) => {
      const { submitCommand } = await import('./submit-runner.js');
      await submitCommand(file, opts);
    });
}
