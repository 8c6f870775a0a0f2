/**
 * The doctor's journal lines. A SQLite journal has none of its own (the state folder line covers
 * it). A PostgreSQL one (journal.url) is probed (src/journal/postgres/probe.ts) and each answer
 * becomes a line: the connection, the schema version, the clock skew, the rights. Never the password.
 */
import { type AgentConfig, journalLocationOf } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import type { ProbeAnswer } from '../journal/postgres/index.js';
import type { CheckLine } from './check-line.js';

/** Past this the clock line warns. */
export const CLOCK_SKEW_WARN_MS = 5_000;

const CONNECT_HINT =
  "check journal.url (host, port, database, user), journal.password and journal.sslmode/caFile; the server's pg_hba.conf must let this host in";

/** An identifier as SQL reads it: bare when it is a plain lower-case name, else quoted. */
export function sqlIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

const seconds = (ms: number) => `${(Math.abs(ms) / 1000).toFixed(1)} s`;

function schemaLine(p: ProbeAnswer): CheckLine {
  const { present, version, known } = p.journal;
  const what = 'journal schema';
  if (version === undefined) {
    return {
      ok: true,
      warn: true,
      what,
      detail: `not known: ${p.user} may not read schema_migrations`,
      hint: 'see the journal rights line',
    };
  }
  if (!present || version === 0) {
    return { ok: true, what, detail: `no journal yet: created at first start (version ${known})` };
  }
  if (version === known) return { ok: true, what, detail: `version ${version} (current)` };
  if (version < known) {
    return {
      ok: true,
      warn: true,
      what,
      detail: `version ${version}, this agent's is ${known}: migrated at next start`,
      hint: 'back up the database before starting the new version (pg_dump)',
    };
  }
  return {
    ok: false,
    what,
    detail: `version ${version}, written by a newer agent: this one knows up to ${known}`,
    hint: 'upgrade the agent',
  };
}

function clockLine(p: ProbeAnswer): CheckLine {
  const { skewMs, roundTripMs } = p.clock;
  const trip = `round trip ${Math.round(roundTripMs)} ms`;
  if (Math.abs(skewMs) <= CLOCK_SKEW_WARN_MS) {
    return { ok: true, what: 'journal clock', detail: `within ${seconds(skewMs)} of this host's (${trip})` };
  }
  return {
    ok: true,
    warn: true,
    what: 'journal clock',
    detail: `the database's clock is ${seconds(skewMs)} ${skewMs > 0 ? 'ahead of' : 'behind'} this host's (${trip})`,
    hint: 'synchronise both clocks (chrony or systemd-timesyncd): the times the agent records and compares are its own, and agents sharing a journal must agree on them',
  };
}

function rightsLines(p: ProbeAnswer): CheckLine[] {
  const what = 'journal rights';
  const user = sqlIdentifier(p.user);
  if (p.schema === undefined) {
    return [
      {
        ok: false,
        what,
        detail: `${p.user} has no schema on its search_path to keep the journal in`,
        hint: `as the database owner: CREATE SCHEMA docex AUTHORIZATION ${user}; ALTER ROLE ${user} SET search_path = docex;`,
      },
    ];
  }
  const schema = sqlIdentifier(p.schema);
  const grantSchema = `as the database owner: GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${user};`;
  const r = p.rights;
  const lines: CheckLine[] = [];
  const { version, known } = p.journal;
  const migrates = !p.journal.present || (version !== undefined && version < known);
  if (!r.usageOnSchema || (migrates && !r.createOnSchema)) {
    lines.push({
      ok: false,
      what,
      detail: !r.usageOnSchema
        ? `${p.user} lacks USAGE on schema ${p.schema}`
        : !p.journal.present
          ? `${p.user} may not create the journal's tables in schema ${p.schema}`
          : `${p.user} lacks CREATE on schema ${p.schema}, which the migration at next start needs`,
      hint: grantSchema,
    });
  }
  if (r.missing.length > 0) {
    lines.push({
      ok: false,
      what,
      detail: `${p.user} lacks ${r.missing.map((m) => `${m.privileges.join(', ')} on ${m.table}`).join('; ')}`,
      hint: `as the tables' owner: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${user};`,
    });
  }
  if (version !== undefined && version > 0 && version < known && r.ownsTables === false) {
    lines.push({
      ok: false,
      what,
      detail: `the migration at next start alters the journal's tables, owned by ${r.tableOwner}, not by ${p.user}`,
      hint: `run the agent as ${r.tableOwner}, or as ${r.tableOwner}: GRANT ${sqlIdentifier(r.tableOwner ?? '')} TO ${user};`,
    });
  }
  if (lines.length > 0) return lines;
  return [
    {
      ok: true,
      what,
      detail: !p.journal.present
        ? `${p.user} may create the journal's tables in schema ${p.schema}`
        : `${p.user} may read and write the journal's tables in schema ${p.schema}`,
    },
  ];
}

/**
 * A warning when files in flight would wait for a journal connection: each holds one for its
 * claim transaction and for every move.
 */
export function poolLine(config: AgentConfig): CheckLine | undefined {
  const { poolSize } = config.journal;
  if (poolSize >= config.concurrency) return undefined;
  return {
    ok: true,
    warn: true,
    what: 'journal pool',
    detail: `journal.poolSize ${poolSize} is below concurrency ${config.concurrency}: files in flight wait for a connection`,
    hint: `set journal.poolSize: ${Math.min(config.concurrency, 64)}, within what PostgreSQL's max_connections allows each agent (docs/configuration.md)`,
  };
}

/** The journal's lines of `docex-agent check`; `clock`: this host's, compared with the database's. */
export async function journalLines(config: AgentConfig, clock?: Clock): Promise<CheckLine[]> {
  if (!config.journal.url) return [];
  let location: ReturnType<typeof journalLocationOf>;
  try {
    location = journalLocationOf(config);
  } catch (err) {
    return [
      {
        ok: false,
        what: 'journal',
        detail: isDocexError(err) ? `${err.code}: ${err.message}` : String(err),
        hint: 'fix the file named in journal.caFile, certFile or keyFile',
      },
    ];
  }
  if (location.kind !== 'postgres') return [];
  const { probePostgres } = await import('../journal/postgres/index.js');
  const p = await probePostgres(location.connection, clock ? { clock } : {});
  const pool = poolLine(config);
  const extra = pool ? [pool] : [];
  if (!p.reached) {
    return [{ ok: false, what: 'journal', detail: `${p.code}: ${p.message}`, hint: CONNECT_HINT }, ...extra];
  }
  return [
    {
      ok: true,
      what: 'journal',
      detail: `PostgreSQL ${p.serverVersion} at ${p.location}, as ${p.user}`,
    },
    schemaLine(p),
    clockLine(p),
    ...rightsLines(p),
    ...extra,
  ];
}
