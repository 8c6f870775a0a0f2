/**
 * The cluster concern: what agents sharing one journal know of each other. On PostgreSQL several
 * agents may run on one database: each writes a heartbeat row (host, pid, version, last seen by the
 * database's clock), and a periodic task that must run once across them (journal pruning, the
 * daily CSV) is claimed with one conditional statement on the database's clock. On SQLite the
 * journal is a file of one agent: it is alone, always alive, and every task is its own.
 *
 * Files are held through the journal's leases (store.ts: holds, renewLeases, takeOverFiles), which
 * name the agent by this identity's id (docs/high-availability.md).
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { packageVersion } from '../core/version.js';

/** Who an agent is, for this start: the id is new at every start. */
export interface AgentIdentity {
  id: string;
  host: string;
  pid: number;
  /** The agent's version (package.json). */
  version: string;
  /**
   * Host and state folder: one agent at a time runs there (the state folder's lock), so an agent
   * row of the same place and another id is an earlier start of this agent, dead.
   */
  place: string;
}

/** alive: heard from within deadAfterMs; stopped: said goodbye; dead: neither. */
export type AgentStatus = 'alive' | 'dead' | 'stopped';

export interface AgentRecord extends AgentIdentity {
  /** The journal schema version this agent's code knows (the rolling-upgrade guard reads it). */
  schemaVersion: number;
  /** Epoch ms, the database's clock. */
  startedAt: number;
  lastSeen: number;
  stoppedAt?: number | undefined;
  /** How long ago the last heartbeat was, by the database's clock (ms). */
  seenAgoMs: number;
  status: AgentStatus;
}

/** Whether this agent should run a task now: at most one agent gets true per period. */
export type TaskClaim = (name: string, periodMs: number, firingAt?: number) => Promise<boolean>;

/** The agents' view of each other, read-only (`docex-agent agents`). */
export interface ClusterReader {
  /** False on SQLite: one agent, nothing shared. */
  readonly shared: boolean;
  /** Where the rows are, for messages (no password). */
  readonly location: string;
  /** Every agent row kept (alive first, then the most recently seen). */
  agents(): Promise<AgentRecord[]>;
  close(): Promise<void>;
}

/** The running agent's side: its heartbeat, its goodbye, and claims of periodic tasks. */
export interface ClusterStore extends ClusterReader {
  readonly self: AgentIdentity;
  /**
   * Writes this agent's row (the first call inserts it) with last_seen = the database's now().
   * Rejects with DOCEX_JOURNAL_VERSION, the row written, when the journal's schema is newer than
   * this agent's code knows: a newer agent migrated it while this one counted as dead.
   */
  heartbeat(): Promise<void>;
  /** Marks this agent stopped (a graceful stop); it no longer counts as alive. */
  markStopped(): Promise<void>;
  /** Agents alive now (this one included once it has written a heartbeat). */
  agentsAlive(): Promise<number>;
  /**
   * Whether this agent should run the task `name` now: true for exactly one caller per `periodMs`
   * across the agents, measured on the database's clock. With `firingAt` (the nominal time of a
   * scheduled firing, epoch ms, the same on every agent), true for exactly one caller per firing,
   * however late each agent gets to it: no firing is skipped because the one before was claimed
   * late. On SQLite always true.
   */
  claimPeriodicTask(name: string, periodMs: number, firingAt?: number): Promise<boolean>;
}

export interface ClusterOptions {
  /** An agent whose last heartbeat is older than this counts as dead (cluster.deadAfterMs). */
  deadAfterMs: number;
  /** This agent (default: a fresh id, this host, this pid, the package's version). */
  identity?: AgentIdentity;
}

/** This process as an agent: a random id per start; `stateDir`, the state folder it locked. */
export function agentIdentity(stateDir = process.cwd()): AgentIdentity {
  const host = os.hostname();
  return {
    id: randomUUID(),
    host,
    pid: process.pid,
    version: packageVersion(),
    place: `${host}:${stateDir}`,
  };
}

/**
 * The journal is a SQLite file of one agent: it is the cluster. Nothing is written; every task is
 * this agent's to run.
 */
export class LocalCluster implements ClusterStore {
  readonly shared = false;
  private readonly startedAt = Date.now();
  private stoppedAt: number | undefined;

  constructor(
    readonly location: string,
    readonly self: AgentIdentity,
    private readonly schemaVersion: number,
  ) {}

  async heartbeat(): Promise<void> {}

  async markStopped(): Promise<void> {
    this.stoppedAt = Date.now();
  }

  async agents(): Promise<AgentRecord[]> {
    const now = Date.now();
    return [
      {
        ...this.self,
        schemaVersion: this.schemaVersion,
        startedAt: this.startedAt,
        lastSeen: this.stoppedAt ?? now,
        ...(this.stoppedAt !== undefined ? { stoppedAt: this.stoppedAt } : {}),
        seenAgoMs: this.stoppedAt === undefined ? 0 : now - this.stoppedAt,
        status: this.stoppedAt === undefined ? 'alive' : 'stopped',
      },
    ];
  }

  async agentsAlive(): Promise<number> {
    return this.stoppedAt === undefined ? 1 : 0;
  }

  async claimPeriodicTask(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}
