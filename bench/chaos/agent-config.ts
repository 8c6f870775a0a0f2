/** The agent configuration of a chaos world (pure): the sandbox's service fragment, routed through any proxies. */
import { SEED } from '../../src/sandbox/seed-ids.js';

export interface SftpFolder {
  remotePath: string;
  host: string;
  port: number;
  username: string;
  privateKeyFile: string;
  hostKeySha256: string;
}

export interface ChaosAgentConfigInput {
  /** `service` of the sandbox's agent-config fragment (secrets as `${file:}` references). */
  service: Record<string, unknown>;
  apiUrl: string;
  authUrl: string;
  timeouts?: Record<string, string>;
  stateDir: string;
  concurrency: number;
  inbox: string;
  archiveDir: string;
  errorDir: string;
  sftp?: SftpFolder;
  /** The folder's mode settings (workflowId, mode, payloadPdf, mapping); default single PDFs. */
  folder?: Record<string, unknown>;
  /** Where statuses, proofs and the Peppol inbox are written (checked for partial files). */
  outputsDir: string;
  /** A PostgreSQL journal (a loopback server, plain TCP) instead of journal.sqlite in stateDir. */
  journal?: { url: string; timeoutMs?: string } | undefined;
  /** The cluster section (several agents on the journal: leases short enough for a run). */
  cluster?: Record<string, string> | undefined;
  /** The webhook receiver on, on a loopback port of the OS's choosing (its URL is logged). */
  webhooks?: boolean | undefined;
}

export function chaosAgentConfig(input: ChaosAgentConfigInput): Record<string, unknown> {
  const { sftp } = input;
  return {
    service: {
      ...input.service,
      apiUrl: input.apiUrl,
      authUrl: input.authUrl,
      ...(input.timeouts ? { timeouts: input.timeouts } : {}),
    },
    stateDir: input.stateDir,
    ...(input.journal
      ? {
          journal: {
            url: input.journal.url,
            sslmode: 'disable',
            ...(input.journal.timeoutMs ? { timeoutMs: input.journal.timeoutMs } : {}),
          },
        }
      : {}),
    ...(input.cluster ? { cluster: input.cluster } : {}),
    concurrency: input.concurrency,
    returns: {
      statuses: { target: { type: 'local', path: `${input.outputsDir}/statuses` } },
      proofs: { target: { type: 'local', path: `${input.outputsDir}/proofs` } },
    },
    peppolInbox: { target: { type: 'local', path: `${input.outputsDir}/peppol-inbox` } },
    ...(input.webhooks ? { webhooks: { enabled: true, listen: '127.0.0.1:0' } } : {}),
    shutdownGraceMs: '2s',
    log: { level: 'info' },
    // Any free port: scenarios may run beside another agent.
    ops: { listen: '127.0.0.1:0' },
    folders: [
      {
        name: 'chaos',
        source: sftp
          ? {
              type: 'sftp',
              host: sftp.host,
              port: sftp.port,
              username: sftp.username,
              privateKeyFile: sftp.privateKeyFile,
              hostKey: { sha256: [sftp.hostKeySha256] },
              path: sftp.remotePath,
              pollIntervalMs: '200ms',
            }
          : { type: 'local', path: input.inbox },
        workflowId: SEED.workflows.pdfEmail,
        archiveDir: input.archiveDir,
        errorDir: input.errorDir,
        // Files are renamed in complete: no settle wait.
        stability: { kind: 'rename-in' },
        concurrency: input.concurrency,
        ...input.folder,
      },
    ],
  };
}
