/** Resolves with the first SIGINT or SIGTERM, then lets a second one end the process the default way. */
export function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
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
