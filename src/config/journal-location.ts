/**
 * Where the configuration puts the journal: journal.sqlite in the state folder, or the PostgreSQL
 * database of journal.url with its password and TLS files read. Throws DocexError DOCEX_CONFIG_*.
 */
import path from 'node:path';
import type { JournalLocation, PostgresTls } from '../journal/index.js';
import { readSecretFile } from './load.js';
import type { AgentConfig } from './schema.js';
import { readPublicFile } from './tls-files.js';

/** The SQLite journal's file name in the state folder. */
export const JOURNAL_FILE = 'journal.sqlite';

export function journalLocationOf(config: Pick<AgentConfig, 'stateDir' | 'journal'>): JournalLocation {
  const journal = config.journal;
  if (!journal?.url) return { kind: 'sqlite', file: path.join(config.stateDir, JOURNAL_FILE) };
  const tls: PostgresTls = {
    mode: journal.sslmode,
    ...(journal.caFile ? { ca: readPublicFile(journal.caFile, 'journal.caFile') } : {}),
    ...(journal.certFile ? { cert: readPublicFile(journal.certFile, 'journal.certFile') } : {}),
    ...(journal.keyFile ? { key: readSecretFile(journal.keyFile, 'journal.keyFile') } : {}),
  };
  return {
    kind: 'postgres',
    connection: {
      url: journal.url,
      ...(journal.password ? { password: journal.password } : {}),
      tls,
      poolSize: journal.poolSize,
      timeoutMs: journal.timeoutMs,
    },
  };
}
