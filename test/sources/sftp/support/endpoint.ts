/** SftpEndpoints for the test servers (host key pinned by fingerprint). */
import type { SftpEndpoint } from '../../../../src/sftp/types.js';
import type { FaultServer } from './fault-server.js';
import type { TestSshd } from './sshd.js';

/** The ssh2 fault server (password login). */
export function faultServerEndpoint(fault: FaultServer): SftpEndpoint {
  return {
    host: fault.host,
    port: fault.port,
    username: fault.username,
    password: fault.password,
    hostKey: { sha256: [fault.fingerprint] },
    keepaliveIntervalMs: 10_000,
    readyTimeoutMs: 10_000,
  };
}

/** The test sshd (key login). */
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
