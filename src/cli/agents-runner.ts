/**
 * `docex-agent agents [--config <file>]`: every agent row of the journal's PostgreSQL database
 * (journal/postgres/cluster.ts), read on one read-only connection: id, host, pid, version, when it
 * started, how long ago it was last seen and whether it is alive (heartbeat within
 * cluster.deadAfterMs), dead (none since) or stopped (it said so). Both times come from the
 * database's clock, so the host running the command may be skewed. A SQLite journal belongs to
 * one agent: the command says so and lists nothing.
 */
import { journalLocationOf, loadConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import { type AgentRecord, describeLocation, openClusterReader } from '../journal/index.js';
import { type CliIo, processIo } from './output/cli-io.js';
import { renderTable } from './output/render.js';
import { READ_ONLY_SECRETS } from './read-only.js';

export interface AgentsCliDeps {
  io?: CliIo;
  /** Where the config's ${env:} are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface AgentsOptions {
  config: string;
}

const COLUMNS = ['id', 'host', 'pid', 'version', 'started', 'last seen', 'status'] as const;

/** `12 s ago`, `5 min ago`, `3 h ago`, `2 d ago`: whole units, rounded down. */
export function agoText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7_200) return `${Math.floor(s / 60)} min ago`;
  if (s < 172_800) return `${Math.floor(s / 3_600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** The agents as a table, alive first (the reader's order). */
export function agentsTable(agents: readonly AgentRecord[]): string {
  return renderTable(
    agents.map((a) => ({
      id: a.id,
      host: a.host,
      pid: a.pid,
      version: a.version,
      started: new Date(a.startedAt).toISOString(),
      'last seen': agoText(a.seenAgoMs),
      status: a.status,
    })),
    COLUMNS,
  );
}

function summary(agents: readonly AgentRecord[]): string {
  const n = (status: AgentRecord['status']) => agents.filter((a) => a.status === status).length;
  return `${n('alive')} alive, ${n('dead')} dead, ${n('stopped')} stopped`;
}

/** The `agents` command, loaded when it runs. */
export async function agentsCommand(opts: AgentsOptions, deps: AgentsCliDeps = {}): Promise<void> {
  const io = deps.io ?? processIo();
  try {
    const { config } = loadConfig(opts.config, {
      env: deps.env ?? process.env,
      secretsOnlyUnder: READ_ONLY_SECRETS.agents,
    });
    const location = journalLocationOf(config);
    if (location.kind === 'sqlite') {
      io.stdout.write(
        `the journal is local to one agent (${describeLocation(location)}): no other agent shares it, and there are no heartbeats to list; set journal.url to share a PostgreSQL journal between agents\n`,
      );
      io.setExitCode(0);
      return;
    }
    const { deadAfterMs } = config.cluster;
    const reader = await openClusterReader(location, { deadAfterMs });
    try {
      const agents = await reader.agents();
      io.stdout.write(
        `agents on ${reader.location} (alive: a heartbeat within ${Math.round(deadAfterMs / 1000)} s, by the database's clock): ${summary(agents)}\n`,
      );
      if (agents.length > 0) io.stdout.write(agentsTable(agents));
    } finally {
      await reader.close();
    }
    io.setExitCode(0);
  } catch (err) {
    io.stderr.write(
      `docex-agent agents: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
    );
    io.setExitCode(1);
  }
}
