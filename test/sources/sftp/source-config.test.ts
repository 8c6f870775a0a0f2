import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { agentConfigSchema } from '../../../src/config/schema.js';
import { intakeOf } from '../../../src/sources/kinds.js';
import { thrownDocex } from '../../api/support/caught.js';

const PIN = 'SHA256:hB2HALNNQwbyi/6kduVzlUWsY7vDlMmfoqnIG2cTxcY';

const sftpFolder = (source: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  name: 'remote-invoices',
  workflowId: 'wf_pdf_email',
  source: {
    type: 'sftp',
    host: 'sftp.example.test',
    username: 'erp',
    password: 'pw',
    hostKey: { sha256: [PIN] },
    path: '/outbox/invoices',
    ...source,
  },
  ...extra,
});

function parse(folder: Record<string, unknown>, stateDir = '/var/lib/docex') {
  return agentConfigSchema.parse({ sandbox: { enabled: true }, stateDir, folders: [folder] });
}

describe('sftp folder source config', () => {
  it('fills remote folders from the remote path and local copies under the state folder', () => {
    const folder = parse(sftpFolder()).folders[0]!;
    expect(folder.source).toMatchObject({
      type: 'sftp',
      port: 22,
      pollIntervalMs: 10_000,
      claim: 'rename',
      afterSuccess: 'archive',
      remoteArchiveDir: '/outbox/invoices/.archive',
      remoteErrorDir: '/outbox/invoices/.error',
      spoolDir: path.join('/var/lib/docex', 'sftp', 'remote-invoices', 'spool'),
    });
    expect(folder.archiveDir).toBe(path.join('/var/lib/docex', 'sftp', 'remote-invoices', 'archive'));
    expect(folder.errorDir).toBe(path.join('/var/lib/docex', 'sftp', 'remote-invoices', 'error'));
  });

  it('keeps configured remote and local folders as given', () => {
    const folder = parse(
      sftpFolder(
        { remoteArchiveDir: '/done', remoteErrorDir: '/bad', spoolDir: '/spool', afterSuccess: 'delete' },
        { archiveDir: '/a', errorDir: '/e' },
      ),
    ).folders[0]!;
    expect(folder.source).toMatchObject({
      remoteArchiveDir: '/done',
      remoteErrorDir: '/bad',
      spoolDir: '/spool',
    });
    expect(folder.archiveDir).toBe('/a');
    expect(folder.errorDir).toBe('/e');
  });

  it('refuses an sftp folder without a host key pin or without a way to log in', () => {
    const noPin = agentConfigSchema.safeParse({
      sandbox: { enabled: true },
      folders: [sftpFolder({ hostKey: {} })],
    });
    expect(noPin.success).toBe(false);
    const noLogin = agentConfigSchema.safeParse({
      sandbox: { enabled: true },
      folders: [sftpFolder({ password: undefined })],
    });
    expect(noLogin.success).toBe(false);
  });

  it('resolves the spool against the config file but leaves the remote path alone', () => {
    const yaml = `sandbox: { enabled: true }
stateDir: ./state
folders:
  - name: remote
    workflowId: wf_pdf_email
    source:
      type: sftp
      host: 127.0.0.1
      port: 2222
      username: erp
      password: pw
      hostKey: { knownHostsFile: ./known_hosts }
      path: outbox
`;
    const { config } = parseConfig(yaml, { baseDir: '/etc/docex', env: {}, readSecretFile: () => '' });
    const folder = config.folders[0]!;
    if (folder.source.type !== 'sftp') throw new Error('expected sftp');
    expect(folder.source.path).toBe('outbox');
    expect(folder.source.hostKey.knownHostsFile).toBe('/etc/docex/known_hosts');
    expect(folder.source.spoolDir).toBe('/etc/docex/state/sftp/remote/spool');
    expect(folder.archiveDir).toBe('/etc/docex/state/sftp/remote/archive');
    expect(intakeOf(folder)).toMatchObject({ dir: '/etc/docex/state/sftp/remote/spool' });
    expect(intakeOf(folder).originalPath('a.pdf')).toBe('sftp://erp@127.0.0.1:2222/outbox/a.pdf');
  });

  it('refuses two folders on the same remote folder of the same server', () => {
    const yaml = `sandbox: { enabled: true }
folders:
  - { name: one, workflowId: wf_pdf_email, source: { type: sftp, host: h, username: u, password: p, hostKey: { sha256: ['${PIN}'] }, path: /in } }
  - { name: two, workflowId: wf_pdf_email, source: { type: sftp, host: h, username: u, password: p, hostKey: { sha256: ['${PIN}'] }, path: /in/ } }
`;
    const err = thrownDocex(() =>
      parseConfig(yaml, { baseDir: '/etc/docex', env: {}, readSecretFile: () => '' }),
    );
    expect(err.code).toBe('DOCEX_CONFIG_INVALID');
    expect(err.message).toContain('folders[1].source.path: same folder as folders[0]');
  });
});

describe('sftp folder source config, combinations', () => {
  it('refuses payload-pdf index-csv pairing on an SFTP folder (ZIP batches work)', () => {
    const result = agentConfigSchema.safeParse({
      sandbox: { enabled: true },
      folders: [sftpFolder({}, { payloadPdf: { pairing: 'index-csv' } })],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['folders', 0, 'payloadPdf', 'pairing']);
  });

  it('takes recursive on an SFTP folder: true is 4 levels, { depth } as written', () => {
    for (const [recursive, depth] of [
      [true, 4],
      [{ depth: 2 }, 2],
    ] as const) {
      const result = agentConfigSchema.safeParse({
        sandbox: { enabled: true },
        folders: [sftpFolder({}, { recursive })],
      });
      expect(result.error?.issues).toBeUndefined();
      expect(result.data?.folders[0]?.recursive).toEqual({ depth });
    }
  });
});
