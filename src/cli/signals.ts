import { constants } from 'node:os';

/**
 * A stop signal this soon after the first is the same request passed on, not a second one: a
 * terminal's Ctrl-C reaches every process of its group, and npm (and a shell that execs, or tsx's
 * runner) sends its child the signal it got, so the agent may see one Ctrl-C two or three times
 * within milliseconds.
 */
export const REPEAT_WINDOW_MS = 1_000;

export type RepeatOutcome = 'repeated' | 'forced';

export interface StopSignalOptions {
  /** Told of each stop signal after the first: `repeated` within REPEAT_WINDOW_MS of it, else `forced`. */
  onRepeat?: (signal: NodeJS.Signals, outcome: RepeatOutcome) => void;
  /** Ends the process on a forced stop (default: exit code 128 + the signal's number, as a shell reports). */
  force?: (signal: NodeJS.Signals) => void;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
}

/** The exit code a shell reports for a process ended by `signal` (130 for SIGINT, 143 for SIGTERM). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/**
 * The decision on each stop signal: the first resolves `stopped`; one within REPEAT_WINDOW_MS of
 * it is ignored; a later one forces the process to end at once, without waiting for the stop.
 */
export function stopSignalHandler(options: StopSignalOptions = {}): {
  stopped: Promise<NodeJS.Signals>;
  handle: (signal: NodeJS.Signals) => void;
} {
  const now = options.now ?? (() => performance.now());
  let resolve: (signal: NodeJS.Signals) => void = () => {};
  const stopped = new Promise<NodeJS.Signals>((r) => {
    resolve = r;
  });
  let first: number | undefined;
  const handle = (signal: NodeJS.Signals) => {
    const at = now();
    if (first === undefined) {
      first = at;
      resolve(signal);
      return;
    }
    if (at - first < REPEAT_WINDOW_MS) {
      options.onRepeat?.(signal, 'repeated');
      return;
    }
    options.onRepeat?.(signal, 'forced');
    (options.force ?? ((s: NodeJS.Signals) => process.exit(signalExitCode(s))))(signal);
  };
  return { stopped, handle };
}

/**
 * Resolves with the first SIGINT or SIGTERM. The handlers stay for the life of the process: a
 * repeat within REPEAT_WINDOW_MS (the same Ctrl-C passed on by npm) is ignored, a later one ends
 * the process at once (see stopSignalHandler). Never the default action: without a handler a
 * repeated SIGINT would kill the agent in the middle of its graceful stop (and under tsx's runner
 * its hidden handler would call process.exit), leaving "stopping agent" as the last line.
 */
export function waitForStopSignal(options: StopSignalOptions = {}): Promise<NodeJS.Signals> {
  const { stopped, handle } = stopSignalHandler(options);
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  return stopped;
}

/**
 * Calls `reload` on each SIGHUP (the daemon convention for "read your configuration again").
 * Installed at once, so a SIGHUP during start-up does not end the process (Node's default).
 * Answers the function that removes the handler.
 */
export function onReloadSignal(reload: () => void): () => void {
  const handler = () => reload();
  process.on('SIGHUP', handler);
  return () => process.off('SIGHUP', handler);
}

/**
 * After the agent has stopped, until the process exits: a late SIGHUP (a reload racing the stop)
 * must not turn a clean exit code into death by signal. Signal handlers do not keep Node alive.
 */
export function ignoreReloadSignal(): void {
  process.on('SIGHUP', () => {});
}
