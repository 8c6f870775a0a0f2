/** What the ops endpoints read of a running Agent, gathered in one place. */
import { readFileSync } from 'node:fs';
import type { Agent } from '../agent/agent.js';
import type { ServiceReachability } from '../api/reachability.js';
import type { AgentConfig } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import { kindOf } from '../sources/kinds.js';
import type { OpsAgentView } from './view.js';

interface TokenSource {
  tokens: { getToken(signal?: AbortSignal): Promise<string> };
  health(options?: { signal?: AbortSignal }): Promise<unknown>;
}

function hasTokens(client: unknown): client is TokenSource {
  const c = client as Partial<TokenSource> | undefined;
  return typeof c?.tokens?.getToken === 'function' && typeof c.health === 'function';
}

export function agentView(
  agent: Agent,
  config: AgentConfig,
  clock: Clock = systemClock,
  reachability?: ServiceReachability,
): OpsAgentView {
  const client = agent.client;
  const certFile = config.service?.tls.certFile;
  return {
    clock,
    journal: agent.journalLocation,
    pingJournal: () => agent.journal.get(0),
    folders: () =>
      [...agent.plan.running.values()].map(({ config: folder }) => {
        // A remote drop folder is not checked here: its own connection says when it fails.
        const drop = kindOf(folder.source).localDropFolder(folder.source);
        return {
          name: folder.name,
          dirs: [...(drop === undefined ? [] : [drop]), folder.archiveDir, folder.errorDir],
        };
      }),
    queueDepth: () => agent.pipeline.size,
    heldForWindow: () => agent.pipeline.heldForWindow(),
    stoppedFolders: () => agent.stoppedFolders,
    unreadableFiles: () => agent.unreadableFiles(),
    retentionRemoved: () => agent.housekeeping?.removed() ?? [],
    agentsAlive: () => agent.cluster.agentsAlive(),
    leases: () => agent.leases.counts,
    clusterTasks: () => agent.clusterTasks,
    ...(agent.outputHealth
      ? {
          failingOutputs: () => agent.outputHealth!.failing(),
          outputFailures: () => agent.outputHealth!.failures(),
        }
      : {}),
    ...(reachability
      ? {
          unreachable: {
            forMs: () => reachability.unreachableForMs(),
            thresholdMs: reachability.errorAfterMs,
          },
        }
      : {}),
    returns: () => ({
      ...agent.inbound?.stats(),
      ...(agent.returns ? { followConcurrency: agent.returns.follower.gate.limit() } : {}),
    }),
    pace: () => ({ concurrency: agent.pace.pacing.limit(), inFlight: agent.pace.inFlight() }),
    ...(config.returns.enabled
      ? { returnsStore: { location: agent.journalLocation, stateDir: config.stateDir } }
      : {}),
    ...(hasTokens(client)
      ? {
          getToken: (signal: AbortSignal) => client.tokens.getToken(signal),
          pingApi: (signal: AbortSignal) => client.health({ signal }),
        }
      : {}),
    certificatePem: () => {
      if (certFile) {
        try {
          return readFileSync(certFile, 'utf8');
        } catch {
          return undefined;
        }
      }
      return agent.sandbox?.clientOptions.tls.cert.toString();
    },
  };
}
