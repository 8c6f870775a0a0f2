/** Where commands write, injected so tests read the output and the exit code. */
import { DocexError } from '../../core/errors.js';

export interface TextSink {
  write(text: string): unknown;
  /** A terminal (process.stderr on one): progress lines are shown there only. */
  isTTY?: boolean | undefined;
  once?(event: 'drain', listener: () => void): unknown;
}

export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  setExitCode(code: number): void;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    setExitCode: (code) => {
      process.exitCode = code;
    },
  };
}

/** Writes and waits for 'drain' when the sink asks for it, so a long export does not pile up. */
export async function writeOut(sink: TextSink, text: string): Promise<void> {
  if (sink.write(text) === false && sink.once) {
    await new Promise<void>((resolve) => sink.once?.('drain', resolve));
  }
}

/** Runs a command; a DocexError becomes one line on stderr and exit code 1 (no stack). */
export async function runReported(io: CliIo, action: () => Promise<void>): Promise<void> {
  try {
    await action();
  } catch (err) {
    if (!(err instanceof DocexError)) throw err;
    io.stderr.write(`error ${err.code}: ${err.message}\n`);
    io.setExitCode(1);
  }
}
