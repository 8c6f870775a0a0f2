/**
 * What `docex-agent start` runs: the agent until SIGTERM/SIGINT. On a signal intake stops,
 * in-flight uploads get shutdownGraceMs, and the journal is closed consistent. An agent that must
 * not run on (a newer agent migrated its journal: Agent.mustStop) stops the same way, exit code 1.
 * The ops endpoints (/healthz, /readyz, /metrics) listen from the start; SIGHUP reloads the folders.
 */
import { Agent } from '../agent/agent.js';
import type { ReloadResult } from '../agent/reload.js';
import { combineObservers } from '../api/observer.js';
import { ServiceReachability } from '../api/reachability.js';
import { type LoadedConfig, loadConfig } from '../config/index.js';
import { systemClock } from '../core/clock.js';
import { startIdleCollection } from '../core/collect.js';
import { isDocexError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import { packageVersion } from '../core/version.js';
import type { AgentMetrics, RunningOps } from '../ops/index.js';
import { sandboxStarter } from './builtin-sandbox.js';
import { installFatalLogging } from './fatal-logging.js';
import { onReloadSignal, signalExitCode, waitForStopSignal } from './signals.js';

/** What a started agent offers its caller besides the Agent itself. */
export interface StartedControl {
  /** Reads the configuration file again (what SIGHUP does). */
  reload(): Promise<ReloadResult>;
  /** Base URL of the ops endpoints, when enabled. */
  opsUrl: string | undefined;
}

export interface StartDeps {
  /** Resolves when the agent should stop (default: the first SIGTERM or SIGINT). */
  stopSignal?: Promise<unknown>;
  log?: Logger;
  /** Called once every folder is watched. */
  onStarted?: (agent: Agent, control: StartedControl) => void;
  /** Installs the reload trigger and answers its removal (default: SIGHUP). */
  reloadSignal?: (reload: () => void) => () => void;
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
  const log = deps.log ?? createLogger({ level: config.log.level, format: config.log.format });
  for (const warning of warnings) log.warn({ config: loaded.file }, warning);
  // From here on the agent speaks JSON lines only (a test passing its own logger keeps the process's handlers).
  const fatal = deps.log ? undefined : installFatalLogging(log);
  // Handlers first: a supervisor may signal as soon as the agent says it started.
  const stopSignal =
    deps.stopSignal ??
    waitForStopSignal({
      onRepeat: (signal, outcome) => {
        if (outcome === 'repeated')
          log.debug({ signal }, 'stop signal repeated (passed on by npm or a shell): ignored');
        else log.warn({ signal }, 'second stop signal: exiting now, without waiting for the stop to finish');
      },
      force: (signal) => {
        log.flush();
        process.exit(signalExitCode(signal));
      },
    });
  let running: Agent | undefined;
  let reloadPending = false;
  let stopping = false;
  // Stays installed until the agent has stopped: without a handler a SIGHUP (systemctl reload)
  // during the graceful stop would end the process the default way and skip the drain.
  const offReload = (deps.reloadSignal ?? onReloadSignal)(() => {
    if (stopping) log.warn({ signal: 'SIGHUP' }, 'reload ignored: the agent is stopping');
    else if (running) void running.reload();
    else reloadPending = true;
  });
  const failed = (err: unknown): number => {
    log.fatal({ err, code: isDocexError(err) ? err.code : undefined }, 'agent failed to start');
    fatal?.restore();
    process.stderr.write(`docex-agent: ${explain(err)}\n`);
    log.flush();
    offReload();
    return 1;
  };

  // Told of every exchange with the service: one warning/error/recovery line per outage, and /readyz.
  const reachability = new ServiceReachability({ clock: systemClock, log: log.child({ part: 'service' }) });
  let metrics: AgentMetrics | undefined;
  let ops: RunningOps | undefined;
  let attachOps: (agent: Agent) => void = () => {};
  if (config.ops.enabled) {
    // Loaded only when enabled: prom-client and the endpoints stay out of memory otherwise.
    const opsModule = await import('../ops/index.js');
    const candidate = config.ops.metrics
      ? new opsModule.AgentMetrics({ version: packageVersion() })
      : undefined;
    try {
      const started = await opsModule.startOps({
        config: config.ops,
        log: log.child({ part: 'ops' }),
        ...(candidate ? { metrics: candidate } : {}),
      });
      ops = started;
      metrics = candidate;
      attachOps = (agent) => started.attach(opsModule.agentView(agent, config, systemClock, reachability));
    } catch (err) {
      // The files matter more than their dashboard: the agent runs on, and says so loudly.
      log.error(
        { err, code: isDocexError(err) ? err.code : undefined },
        'ops endpoints not started; the agent runs without /healthz, /readyz and /metrics',
      );
    }
  }
  let agent: Agent;
  try {
    agent = await Agent.start({
      config,
      configFile: loaded.file,
      log,
      apiObserver: combineObservers(reachability, metrics?.apiObserver),
      startSandbox: sandboxStarter(config, log),
    });
  } catch (err) {
    await ops?.stop();
    return failed(err);
  }
  attachOps(agent);
  const stopIdleCollection = startIdleCollection(log.child({ part: 'memory' }));
  running = agent;
  if (reloadPending) void agent.reload();
  const control: StartedControl = { reload: () => agent.reload(), opsUrl: ops?.url };
  deps.onStarted?.(agent, control);
  const ended = await Promise.race([
    stopSignal.then((signal) => ({ signal, reason: undefined })),
    agent.mustStop.then((reason) => ({ signal: undefined, reason })),
  ]);
  stopping = true;
  stopIdleCollection();
  if (ended.reason) {
    log.error({ code: ended.reason.code }, 'stopping agent: it must not run on this journal');
    process.stderr.write(`docex-agent: ${explain(ended.reason)}\n`);
  } else log.info({ signal: ended.signal }, 'stopping agent');
  // The endpoints go first: their journal reader must be closed before the journal closes.
  await ops?.stop();
  const report = await agent.stop();
  offReload();
  log.flush();
  fatal?.restore();
  return report.failures.length === 0 && !ended.reason ? 0 : 1;
}
