/**
 * `docex-agent report --date YYYY-MM-DD`: the options here; the store reader (report-runner.ts)
 * is loaded when the command runs.
 */
import type { Command } from 'commander';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

export function registerReportCommand(program: Command): void {
  program
    .command('report')
    .description('rebuild statuses-YYYY-MM-DD.csv of one UTC day from the state folder')
    .requiredOption('--date <YYYY-MM-DD>', 'the UTC day')
    .option('-c, --config <file>', 'configuration file', DEFAULT_CONFIG_FILE)
    .action(async (opts: { date: string; config: string }) => {
      const { reportCommand } = await import('./report-runner.js');
      await reportCommand(opts);
    });
}
