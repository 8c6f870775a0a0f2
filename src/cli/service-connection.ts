/**
 * Reads the service connection from a YAML file shaped like the sandbox's `agent-config.yaml`:
 * `service: {apiUrl, authUrl, clientId, clientSecret, apiKey, tls: {caFile, certFile, keyFile},
 * admin?: {apiUrl, authUrl, clientId, clientSecret, apiKey?}}`, with `${file:path}` and
 * `${env:NAME}` references. A stand-in until the config module (src/config) takes over.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { z } from 'zod';
import type { AdminClientOptions } from '../api/admin/index.js';
import { DocexError } from '../core/errors.js';

export interface ServiceConnection {
  apiUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  apiKey: string;
  tls: { ca: string; cert?: string | undefined; key?: string | undefined };
  /** Interface B, when the file has an `admin` block. */
  admin?:
    | { apiUrl: string; authUrl: string; clientId: string; clientSecret: string; apiKey: string }
    | undefined;
}

const text = z.string().min(1);
const fileSchema = z.object({
  service: z.object({
    apiUrl: text,
    authUrl: text,
    clientId: text,
    clientSecret: text,
    apiKey: text,
    tls: z.object({ caFile: text, certFile: text.optional(), keyFile: text.optional() }),
    admin: z
      .object({
        apiUrl: text,
        authUrl: text.optional(),
        clientId: text,
        clientSecret: text,
        apiKey: text.optional(),
      })
      .optional(),
  }),
});

function configError(file: string, message: string, cause?: unknown): DocexError {
  return new DocexError(
    'DOCEX_CONFIG_INVALID',
    `${file}: ${message}`,
    cause === undefined ? undefined : { cause },
  );
}

/** Replaces a whole-value `${file:…}` or `${env:…}` reference; other text is kept as it is. */
function resolveRef(value: string, baseDir: string, file: string, field: string): string {
  const m = /^\$\{(file|env):(.+)\}$/.exec(value.trim());
  if (!m) return value;
  const [, kind, target = ''] = m;
  if (kind === 'env') {
    const v = process.env[target];
    if (v === undefined || v === '')
      throw configError(file, `${field}: environment variable ${target} is not set`);
    return v;
  }
  try {
    return readFileSync(path.resolve(baseDir, target), 'utf8').trim();
  } catch (err) {
    throw configError(file, `${field}: cannot read the referenced file`, err);
  }
}

function readPem(baseDir: string, file: string, field: string, target: string): string {
  try {
    return readFileSync(path.resolve(baseDir, target), 'utf8');
  } catch (err) {
    throw configError(file, `${field}: cannot read ${target}`, err);
  }
}

export function loadServiceConnection(file: string): ServiceConnection {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw configError(file, 'cannot read or parse the YAML file', err);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw configError(file, `${first?.path.join('.') ?? '(file)'}: ${first?.message ?? 'invalid'}`);
  }
  const s = parsed.data.service;
  const dir = path.dirname(path.resolve(file));
  const ref = (value: string, field: string) => resolveRef(value, dir, file, field);
  const apiKey = ref(s.apiKey, 'service.apiKey');
  return {
    apiUrl: s.apiUrl,
    authUrl: s.authUrl,
    clientId: s.clientId,
    clientSecret: ref(s.clientSecret, 'service.clientSecret'),
    apiKey,
    tls: {
      ca: readPem(dir, file, 'service.tls.caFile', s.tls.caFile),
      cert:
        s.tls.certFile === undefined ? undefined : readPem(dir, file, 'service.tls.certFile', s.tls.certFile),
      key: s.tls.keyFile === undefined ? undefined : readPem(dir, file, 'service.tls.keyFile', s.tls.keyFile),
    },
    admin: s.admin && {
      apiUrl: s.admin.apiUrl,
      authUrl: s.admin.authUrl ?? s.admin.apiUrl,
      clientId: s.admin.clientId,
      clientSecret: ref(s.admin.clientSecret, 'service.admin.clientSecret'),
      apiKey: s.admin.apiKey === undefined ? apiKey : ref(s.admin.apiKey, 'service.admin.apiKey'),
    },
  };
}

/** The AdminClient options of a connection; DOCEX_CONFIG_INVALID when it has no admin block. */
export function adminClientOptions(connection: ServiceConnection, file: string): AdminClientOptions {
  if (!connection.admin) throw configError(file, 'service.admin (Interface B connection) is missing');
  return { ...connection.admin, ca: connection.tls.ca };
}
