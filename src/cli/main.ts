#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerDemoCommand } from './demo-command.js';
import { registerSandboxCommand } from './sandbox-command.js';

/** One file per command; each registers itself on the program here. */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('docex-agent')
    .description('File-drop integration agent for the Document Exchange Service')
    .version(packageVersion());
  registerSandboxCommand(program);
  registerDemoCommand(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
