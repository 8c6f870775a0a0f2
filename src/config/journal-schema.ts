/**
 * The journal section: where the exactly-once record is kept (the SQLite file in the state folder,
 * or a PostgreSQL database) and how long finished entries stay.
 */
import { z } from 'zod';
import { count, durationMs, pathText, retention, secretText } from './schema-types.js';

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\//.test(value), 'expected a postgres://user@host:port/database URL')
  .refine((value) => {
    try {
      return new URL(value).password === '';
    } catch {
      return false;
    }
  }, `write the password in journal.password (\${env:NAME}, \${file:PATH} or \${credential:NAME}), not in the URL`);

export const journalSchema = z
  .strictObject({
    retention: retention().describe(
      'Finished files (done or refused) last moved longer ago than this lose their history and payload rows, and a refused one its whole entry; a done file keeps one row (folder, workflow, SHA-256, name, job id), so the same content is still refused as a duplicate. `90d`, `12h` or `off` (keep everything, the default). Checked a minute after start and every 6 hours, in short batches.',
    ),
    url: postgresUrl
      .optional()
      .describe(
        'A PostgreSQL database for the journal and everything else durable of the agent, instead of journal.sqlite in the state folder. The database must exist; the agent creates its tables. Without it: SQLite in stateDir.',
      )
      .meta({ examples: ['postgres://docex@db.example.net:5432/docex'] }),
    password: secretText()
      .optional()
      .describe(`Password of the URL’s user; \${env:NAME}, \${file:PATH} or \${credential:NAME}.`),
    sslmode: z
      .enum(['disable', 'require', 'verify-ca', 'verify-full'])
      .default('verify-full')
      .describe(
        'TLS towards PostgreSQL, as libpq names it: disable (plain TCP, for a database on this host), require (TLS, server not verified), verify-ca (TLS, server certificate chains to caFile), verify-full (verify-ca and the host name matches).',
      ),
    caFile: pathText()
      .optional()
      .describe('PEM of the CA that signed the database server’s certificate (verify-ca, verify-full).'),
    certFile: pathText().optional().describe('PEM of a client certificate, for certificate authentication.'),
    keyFile: pathText()
      .optional()
      .describe('PEM of the client certificate’s private key; refused when group or others may read it.'),
    poolSize: count(1, 64, 4).describe(
      "Connections of the journal's pool, which every claim and move of a file holds while it runs: below concurrency, files in flight wait for one. The returns store, the readers, the inbox and the heartbeats keep small pools of their own.",
    ),
    timeoutMs: durationMs(10_000).describe(
      'How long connecting or one statement may take before the database counts as unreachable.',
    ),
  })
  .prefault({})
  .describe(
    'The journal: the exactly-once record of every file taken. journal.sqlite in the state folder, or a PostgreSQL database (url).',
  );
