/** An SftpEndpoint for the test sshd (key login, host key pinned by fingerprint). */
import type { SftpEndpoint } from '../../../../src/sftp/types.js';
import type { TestSshd } from './sshd.js';

export function sshdEndpoint(sshd: TestSshd, overrides: Partial<SftpEndpoint> = {}): SftpEndpoint {
  return {
    host: sshd.host,
    port: sshd.port,
    username: sshd.username,
    privateKey: sshd.privateKey,
    hostKey: { sha256: [sshd.hostKeySha256] },
    keepaliveIntervalMs: 10_000,
    readyTimeoutMs: 10_000,
    ...overrides,
  };
}
