import { Command } from 'commander';
import type { CliIo } from '../../../src/cli/output/cli-io.js';

export interface CliRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Runs `args` through a fresh program with the commands `register` adds, and answers what they
 * printed and the exit code they set. A fresh program per run: commander keeps option values on
 * its command objects.
 */
export async function runCli(
  register: (program: Command, deps: { io: CliIo }) => void,
  args: string[],
): Promise<CliRun> {
  const out: CliRun = { stdout: '', stderr: '', exitCode: 0 };
  const io: CliIo = {
    stdout: { write: (text: string) => (out.stdout += text) },
    stderr: { write: (text: string) => (out.stderr += text) },
    setExitCode: (code) => {
      out.exitCode = code;
    },
  };
  const program = new Command().exitOverride();
  register(program, { io });
  await program.parseAsync(args, { from: 'user' });
  return out;
}
