/**
 * What `docex-agent start` runs: the agent until SIGTERM/SIGINT. On a signal intake stops,
 * in-flight uploads get shutdownGraceMs, and the journal is closed consistent.
 */
import { Agent } from '../agent/agent.js';
import { type LoadedConfig, loadConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { waitForStopSignal } from './signals.js';

export interface StartDeps {
  /** Resolves when the agent should stop (default: the first SIGTERM or SIGINT). */
  stopSignal?: Promise<unknown>;
  log?: Logger;
  /** Called once every folder is watched. */
  onStarted?: (agent: Agent) => void;
}

/** Prints a configuration or start-up error without a stack: the message says what to fix. */
function explain(err: unknown): string {
  return isDocexError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
}

export async function runStart(configFile: string, deps: StartDeps = {}): Promise<number> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(configFile);
  } catch (err) {
    process.stderr.write(`docex-agent: ${explain(err)}\n`);
    return 2;
  }
  const { config, warnings } = loaded;
  const log = deps.log ?? createLogger({ level: config.log.level });
  for (const warning of warnings) log.warn({ config: loaded.file }, warning);
  // Handlers first: a supervisor may signal as soon as the agent says it started.
  const stopSignal = deps.stopSignal ?? waitForStopSignal();
  let agent: Agent;
  try {
    agent = await Agent.start({ config, log });
  } catch (err) {
    log.fatal({ err, code: isDocexError(err) ? err.code : undefined }, 'agent failed to start');
    process.stderr.write(`docex-agent: ${explain(err)}\n`);
    log.flush();
    return 1;
  }
  deps.onStarted?.(agent);
  const signal = await stopSignal;
  log.info({ signal }, 'stopping agent');
  const report = await agent.stop();
  log.flush();
  return report.failures.length === 0 ? 0 : 1;
}
