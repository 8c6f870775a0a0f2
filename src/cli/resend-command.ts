/**
 * `docex-agent resend <sendingEventId>`: a new sending event from a final one. Options here; the
 * checks and the call (resend-runner.ts) are loaded when the command runs.
 */
import type { Command } from 'commander';
import type { ServiceCliDeps } from './service-cli-deps.js';
import { serviceCommandOptions } from './webhooks-command.js';

export function registerResendCommand(program: Command, deps: ServiceCliDeps = {}): void {
  serviceCommandOptions(program.command('resend <sendingEventId>'))
    .description('re-send a sending event in a final state (not a re-send itself): all its tasks run again')
    .option('--again', 're-send an event that was already re-sent once more', false)
    .action(async (id: string, opts: { config: string; output: 'json' | 'table'; again: boolean }) => {
      const { resendCommand } = await import('./resend-runner.js');
      await resendCommand(id, opts, deps);
    });
}
