/**
 * The agent's configuration: one zod schema validates the YAML, generates
 * config/agent.schema.json and config/agent.example.yaml (see generate.ts). Defaults live here
 * and nowhere else.
 */

import { z } from 'zod';
import { DEFAULT_TIMEOUTS } from '../api/index.js';
import { NAMES_PROFILES } from '../domain/names-profile.js';
import { kindOf } from '../sources/kinds.js';
import { clusterSchema } from './cluster-schema.js';
import { folderSchema } from './folder-schema.js';
import { peppolInboxSchema, webhooksSchema } from './inbound-schema.js';
import { inspectionSchema } from './inspection-schema.js';
import { journalSchema } from './journal-schema.js';
import { opsSchema } from './ops-schema.js';
import { withStateDir } from './output-schema.js';
import { paceSchema } from './pace-schema.js';
import { returnsSchema } from './returns-schema.js';
import {
  byteSize,
  count,
  durationMs,
  flag,
  httpsUrl,
  pathText,
  positiveNumber,
  secretText,
} from './schema-types.js';

export type { FolderConfig, FolderMode, ScanOrder } from './folder-schema.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;

const tlsSchema = z
  .strictObject({
    caFile: pathText()
      .describe('PEM of the CA that signed the service certificate (pinned: system CAs are not trusted).')
      .meta({ examples: ['./tls/ca.pem'] }),
    certFile: pathText()
      .describe('PEM of the client certificate for mutual TLS.')
      .meta({ examples: ['./tls/client.pem'] }),
    keyFile: pathText()
      .describe('PEM of the client private key; refused when group or others may read it.')
      .meta({ examples: ['./tls/client.key'] }),
  })
  .describe('Mutual TLS material, as files.');

const timeoutsSchema = z
  .strictObject({
    connectMs: durationMs(DEFAULT_TIMEOUTS.connectMs).describe('TCP and TLS connection set-up.'),
    headersMs: durationMs(DEFAULT_TIMEOUTS.headersMs).describe(
      'From sending a request (body included) to the headers of the answer.',
    ),
    bodyMs: durationMs(DEFAULT_TIMEOUTS.bodyMs).describe('Longest silence while an answer body streams.'),
    keepAliveMs: durationMs(DEFAULT_TIMEOUTS.keepAliveMs).describe('How long an idle connection is kept.'),
  })
  .prefault({})
  .describe('HTTP timeouts of the API, token and file hosts.');

// Interface B has its own host and token endpoint and no client certificate (decisions, Authentication).
const adminSchema = z
  .strictObject({
    apiUrl: httpsUrl()
      .describe('Base URL of Interface B.')
      .meta({ examples: ['https://admin.docex.example.com'] }),
    authUrl: httpsUrl()
      .describe('Base URL of the OAuth2 token host of the partner-admin client.')
      .meta({ examples: ['https://admin.docex.example.com'] }),
    clientId: z
      .string()
      .min(1)
      .describe('OAuth2 client id of the partner-admin client.')
      .meta({ examples: [`\${env:DOCEX_ADMIN_CLIENT_ID}`] }),
    clientSecret: secretText()
      .describe(`OAuth2 client secret of the partner-admin client; \${env:NAME} or \${file:PATH}.`)
      .meta({ examples: [`\${env:DOCEX_ADMIN_CLIENT_SECRET}`] }),
    apiKey: secretText()
      .describe(`API key sent as x-api-key; \${env:NAME} or \${file:PATH}.`)
      .meta({ examples: [`\${file:./secrets/api-key}`] }),
  })
  .describe(
    'Interface B (partner administration: companies, users, reports), reached with server TLS only (the CA of tls.caFile). Only the administration commands need it.',
  );

export const serviceSchema = z
  .strictObject({
    apiUrl: httpsUrl()
      .describe('Base URL of Interface A.')
      .meta({ examples: ['https://api.docex.example.com/v1'] }),
    authUrl: httpsUrl()
      .describe('Base URL of the OAuth2 token host.')
      .meta({ examples: ['https://auth.docex.example.com'] }),
    clientId: z
      .string()
      .min(1)
      .describe('OAuth2 client id.')
      .meta({ examples: [`\${env:DOCEX_CLIENT_ID}`] }),
    clientSecret: secretText()
      .describe(`OAuth2 client secret. Write \${env:NAME} or \${file:PATH}, not the secret itself.`)
      .meta({ examples: [`\${env:DOCEX_CLIENT_SECRET}`] }),
    apiKey: secretText()
      .describe(`API key sent as x-api-key. Write \${env:NAME} or \${file:PATH}, not the key itself.`)
      .meta({ examples: [`\${file:./secrets/api-key}`] }),
    tls: tlsSchema,
    managedCompanyId: z
      .string()
      .min(1)
      .optional()
      .describe('Default x-managed-company-id for every call; a folder may name another.')
      .meta({ examples: ['cmp_managed'] }),
    timeouts: timeoutsSchema,
    admin: adminSchema.optional(),
  })
  .describe('Connection to the Document Exchange Service. Required unless sandbox.enabled is true.');

const sandboxSchema = z
  .strictObject({
    enabled: flag(false).describe(
      'Start the built-in sandbox in this process and take the service connection from it.',
    ),
    stateDir: pathText()
      .default('./var/sandbox')
      .describe('Certificates, credentials and data of the sandbox.'),
    speed: positiveNumber(1).describe('Run sending events this many times faster than real time.'),
    uploadWindowMs: durationMs(2 * 3_600_000).describe('How long a new job waits for its file.'),
    names: z
      .enum(NAMES_PROFILES)
      .default('spec')
      .describe(
        "The names the sandbox speaks: spec (the specification's) or reference (the live service's API " +
          'reference: AWAITING_FOR_FILE, DOCCLE_* kinds, job webhooks at final statuses only, named ' +
          'webhook subscriptions).',
      ),
    ports: z
      .strictObject({
        api: count(0, 65_535, 0).describe('Port of the mTLS API host (0: any free port).'),
        auth: count(0, 65_535, 0).describe('Port of the OAuth token host (0: any free port).'),
        files: count(0, 65_535, 0).describe(
          'Port of the pre-signed files and control host (0: any free port).',
        ),
        admin: count(0, 65_535, 0).describe('Port of the Interface B host (0: any free port).'),
      })
      .prefault({})
      .describe('Loopback ports of the sandbox hosts; fixed ports let curl and other tools find them.'),
  })
  .prefault({})
  .describe('The local emulator of the service, for trying the agent out without an account.');

export const agentConfigSchema = z
  .strictObject({
    version: z.literal(1).default(1).describe('Format version of this file.'),
    service: serviceSchema.optional(),
    sandbox: sandboxSchema,
    stateDir: pathText()
      .default('./var/state')
      .describe('Where the agent keeps its journal and other state; must survive restarts.'),
    concurrency: count(1, 256, 4).describe(
      "Calls to the service in flight at the same time (creates, uploads, a job's status), all folders together. Twice as many files are processed at once: their local steps (hash, inspection, journal, archive) run beside the others' calls.",
    ),
    maxFileBytes: byteSize(1024 ** 3).describe(
      'Files larger than this are refused before any job is created.',
    ),
    shutdownGraceMs: durationMs(30_000).describe(
      'On stop, how long work in flight may take to finish before the agent exits anyway.',
    ),
    journal: journalSchema,
    cluster: clusterSchema,
    log: z
      .strictObject({
        level: z.enum(LOG_LEVELS).default('info').describe('Lowest level written.'),
        format: z
          .enum(LOG_FORMATS)
          .default('auto')
          .describe('json: JSON lines; pretty: coloured text; auto: pretty on a terminal, JSON otherwise.'),
      })
      .prefault({})
      .describe('Logging on standard output (journald reads it).'),
    inspection: inspectionSchema,
    pace: paceSchema,
    folders: z.array(folderSchema).default([]).describe('The drop folders.'),
    peppolInbox: peppolInboxSchema,
    webhooks: webhooksSchema,
    ops: opsSchema,
    returns: returnsSchema,
  })
  .superRefine((config, refinement) => {
    if (config.sandbox.enabled && config.service) {
      refinement.addIssue({
        code: 'custom',
        path: ['service'],
        message: 'must be absent when sandbox.enabled is true (the connection comes from the sandbox)',
      });
    }
    if (!config.sandbox.enabled && !config.service) {
      refinement.addIssue({
        code: 'custom',
        path: ['service'],
        message: 'Required unless sandbox.enabled is true',
      });
    }
    const names = new Map<string, number>();
    config.folders.forEach((folder, i) => {
      const sameName = names.get(folder.name.toLowerCase());
      if (sameName !== undefined) {
        refinement.addIssue({
          code: 'custom',
          path: ['folders', i, 'name'],
          message: `same name as folders[${sameName}]`,
        });
      } else names.set(folder.name.toLowerCase(), i);
    });
  })
  // What a kind of source keeps under the state folder (an SFTP folder's spool and local copies).
  .overwrite((config) => ({
    ...config,
    folders: config.folders.map((folder) => kindOf(folder.source).withStateDefaults(folder, config.stateDir)),
  }))
  // Local outputs written as <stateDir>/… (the defaults) lie under the state folder (output-schema.ts).
  .overwrite((config) => ({
    ...config,
    peppolInbox: { ...config.peppolInbox, target: withStateDir(config.peppolInbox.target, config.stateDir) },
    returns: {
      ...config.returns,
      statuses: {
        ...config.returns.statuses,
        target: withStateDir(config.returns.statuses.target, config.stateDir),
      },
      proofs: {
        ...config.returns.proofs,
        target: withStateDir(config.returns.proofs.target, config.stateDir),
      },
    },
  }))
  .meta({
    title: 'docex-agent configuration',
    description: `Configuration of docex-agent. Relative paths are relative to the folder of this file. Any text value may use \${env:NAME} (an environment variable) or \${file:PATH} (the content of a file, relative to this file, without its last newline; the file must not be readable by group or others). Write $\${ for a literal \${. Durations: 500ms, 2s, 10m, 2h, 1d or milliseconds. Sizes: 512KiB, 100MiB, 1GiB or bytes.`,
  });

export type AgentConfig = z.output<typeof agentConfigSchema>;
export type AgentConfigInput = z.input<typeof agentConfigSchema>;
export type ServiceConfig = z.output<typeof serviceSchema>;
