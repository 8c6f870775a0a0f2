/**
 * Where the journal lives: a SQLite file in the state folder (one agent), or a PostgreSQL database
 * (a database the site already runs; later several agents). Everything durable of the agent goes
 * to the same place.
 */

/** TLS towards PostgreSQL, as libpq's sslmode names it. */
export interface PostgresTls {
  /** disable: plain TCP; require: TLS, server not verified; verify-ca / verify-full: verified against `ca`. */
  mode: 'disable' | 'require' | 'verify-ca' | 'verify-full';
  /** PEM text of the CA the server's certificate must chain to. */
  ca?: string | undefined;
  /** PEM text of a client certificate and its key (certificate authentication). */
  cert?: string | undefined;
  key?: string | undefined;
}

export interface PostgresConnection {
  /** `postgres://user@host:port/database`; a password in it is refused by the config (use `password`). */
  url: string;
  password?: string | undefined;
  tls?: PostgresTls | undefined;
  /** Connections the agent keeps open at most. */
  poolSize: number;
  /** How long a connection attempt or a statement may take before it counts as failed (ms). */
  timeoutMs: number;
}

export type JournalLocation =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; connection: PostgresConnection };

/**
 * The files on this host that hold the journal (the SQLite file and its WAL), for the disk checks
 * and the size metric; none for a journal in a database server.
 */
export function journalFiles(location: JournalLocation): string[] {
  return location.kind === 'sqlite' ? [location.file, `${location.file}-wal`] : [];
}

/** The URL without a password, for logs and messages. */
export function describeLocation(location: JournalLocation): string {
  if (location.kind === 'sqlite') return location.file;
  try {
    const url = new URL(location.connection.url);
    url.password = '';
    return url.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
