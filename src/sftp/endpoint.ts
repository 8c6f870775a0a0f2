/** From the validated connection config to an SftpEndpoint: reads the private key (secret file rules). */
import { readSecretFile } from '../config/load.js';
import type { SftpConnectionConfig } from '../config/sftp-schema.js';
import type { SftpEndpoint } from './types.js';

/**
 * `at` names the config place in errors (`returns.proofs.target.privateKeyFile`). A key file readable
 * by group or others is refused (DOCEX_CONFIG_SECRET_PERMISSIONS), like the TLS key.
 */
export function endpointFromConfig(conn: SftpConnectionConfig, at = 'sftp'): SftpEndpoint {
  return {
    host: conn.host,
    port: conn.port,
    username: conn.username,
    ...(conn.password !== undefined ? { password: conn.password } : {}),
    ...(conn.privateKeyFile !== undefined
      ? { privateKey: Buffer.from(`${readSecretFile(conn.privateKeyFile, `${at}.privateKeyFile`)}\n`) }
      : {}),
    ...(conn.passphrase !== undefined ? { passphrase: conn.passphrase } : {}),
    hostKey: {
      ...(conn.hostKey.sha256 ? { sha256: conn.hostKey.sha256 } : {}),
      ...(conn.hostKey.knownHostsFile ? { knownHostsFile: conn.hostKey.knownHostsFile } : {}),
    },
    keepaliveIntervalMs: conn.keepaliveMs,
    readyTimeoutMs: conn.readyTimeoutMs,
  };
}
