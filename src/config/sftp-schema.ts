/**
 * One SFTP connection: shared by SFTP folder sources and SFTP output targets. The host key is
 * always pinned (fingerprints or a known_hosts file): an unknown key is never trusted on first use.
 */
import path from 'node:path';
import { z } from 'zod';
import { count, durationMs, pathText, secretText } from './schema-types.js';

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

export const hostKeySchema = z
  .strictObject({
    sha256: z
      .array(z.string().regex(FINGERPRINT, 'expected SHA256:… as `ssh-keygen -lf <key>` prints it'))
      .min(1)
      .optional()
      .describe('Accepted host key fingerprints (several during a key rotation).')
      .meta({ examples: [['SHA256:hB2HALNNQwbyi/6kduVzlUWsY7vDlMmfoqnIG2cTxcY']] }),
    knownHostsFile: pathText()
      .optional()
      .describe(
        'An OpenSSH known_hosts file (hashed entries too; `[host]:port` for a port other than 22); relative to this file.',
      ),
  })
  .refine((v) => v.sha256 !== undefined || v.knownHostsFile !== undefined, {
    error: 'give sha256 fingerprints or a knownHostsFile: an unknown host key is never trusted',
  })
  .describe('How the server is recognised. A key that matches neither refuses the connection.');

/** The connection fields; spread into a source or target object (then apply refineSftpConnection). */
export const sftpConnectionShape = {
  host: z
    .string()
    .min(1, 'must not be empty')
    .describe('Server name or address.')
    .meta({ examples: ['sftp.example.com'] }),
  port: count(1, 65535, 22).describe('SSH port.'),
  username: z
    .string()
    .min(1, 'must not be empty')
    .describe('Login name.')
    .meta({ examples: ['erp'] }),
  password: secretText().optional().describe(`Password login. Write it as \${env:NAME} or \${file:PATH}.`),
  privateKeyFile: pathText()
    .optional()
    .describe(
      'Private key file (OpenSSH or PEM); must not be readable by group or others. Relative to this file.',
    )
    .meta({ examples: ['./keys/erp_ed25519'] }),
  passphrase: secretText().optional().describe('Passphrase of the private key, if it has one.'),
  hostKey: hostKeySchema,
  keepaliveMs: durationMs(15_000).describe('Keepalive interval on idle connections (0 turns it off).'),
  readyTimeoutMs: durationMs(20_000).describe('How long connecting and logging in may take.'),
};

interface ConnectionFields {
  password?: string | undefined;
  privateKeyFile?: string | undefined;
  passphrase?: string | undefined;
}

/** Cross-field rules: a way to log in; a passphrase only with a key. */
export function refineSftpConnection(value: ConnectionFields, refinement: z.RefinementCtx): void {
  if (value.password === undefined && value.privateKeyFile === undefined) {
    refinement.addIssue({
      code: 'custom',
      message: 'give a password or a privateKeyFile',
      path: ['password'],
    });
  }
  if (value.passphrase !== undefined && value.privateKeyFile === undefined) {
    refinement.addIssue({
      code: 'custom',
      message: 'passphrase needs a privateKeyFile',
      path: ['passphrase'],
    });
  }
}

export const sftpConnectionSchema = z.strictObject(sftpConnectionShape).superRefine(refineSftpConnection);

export type SftpConnectionConfig = z.output<typeof sftpConnectionSchema>;

/** The same connection with its local files (key, known_hosts) resolved against the config folder. */
export function resolveSftpConnectionPaths<T extends SftpConnectionConfig>(conn: T, base: string): T {
  return {
    ...conn,
    ...(conn.privateKeyFile ? { privateKeyFile: path.resolve(base, conn.privateKeyFile) } : {}),
    hostKey: {
      ...conn.hostKey,
      ...(conn.hostKey.knownHostsFile
        ? { knownHostsFile: path.resolve(base, conn.hostKey.knownHostsFile) }
        : {}),
    },
  };
}
