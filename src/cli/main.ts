#!/usr/bin/env node
import { Command } from 'commander';
import { packageVersion } from '../core/version.js';
import { registerAdminCommand } from './admin-command.js';
import { registerAgentsCommand } from './agents-command.js';
import { registerCheckCommand } from './check-command.js';
import { registerCredentialsCommand } from './credentials-command.js';
import { registerJournalCommand } from './journal-command.js';
import { unsupportedNode } from './node-support.js';
import { registerReportCommand } from './report-command.js';
import { registerResendCommand } from './resend-command.js';
import { registerReturnsCommand } from './returns-command.js';
import { registerSandboxCommand } from './sandbox-command.js';
import { registerStartCommand } from './start-command.js';
import { registerStatusCommand } from './status-command.js';
import { registerSubmitCommand } from './submit-command.js';
import { registerUsageCommand } from './usage-command.js';
import { registerWebhooksCommand } from './webhooks-command.js';

/**
 * One file per command; each registers its options here and imports its implementation (a
 * `*-runner.ts`, the sandbox, the admin client) only when it runs, so a command loads only its own
 * modules.
 */

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('docex-agent')
    .description('File-drop integration agent for the Document Exchange Service')
    .version(packageVersion());
  registerSandboxCommand(program);
  registerAdminCommand(program);
  registerUsageCommand(program);
  registerStartCommand(program);
  registerSubmitCommand(program);
  registerStatusCommand(program);
  registerCheckCommand(program);
  registerReportCommand(program);
  registerCredentialsCommand(program);
  registerWebhooksCommand(program);
  registerResendCommand(program);
  registerReturnsCommand(program);
  registerJournalCommand(program);
  registerAgentsCommand(program);
  return program;
}

// Before any command loads its modules: an old Node fails here with one line, not in a driver.
const unsupported = unsupportedNode(process.version);
if (unsupported) {
  process.stderr.write(`${unsupported}\n`);
  process.exit(1);
}
await buildProgram().parseAsync(process.argv);
