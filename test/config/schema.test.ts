import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.js';
import {
  formatByteSize,
  formatDuration,
  parseByteSize,
  parseDuration,
  parseRate,
} from '../../src/config/units.js';

const SERVICE = {
  apiUrl: 'https://api.example.test/v1',
  authUrl: 'https://auth.example.test',
  clientId: 'client',
  clientSecret: 's3cret',
  apiKey: 'k3y',
  tls: { caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key' },
};
const FOLDER = {
  name: 'invoices',
  source: { type: 'local', path: 'in/invoices' },
  workflowId: 'wf_pdf_email',
};

function parse(input: unknown) {
  return agentConfigSchema.safeParse(input);
}

describe('durations and sizes', () => {
  it('reads durations with a unit or as milliseconds and writes the shortest exact text', () => {
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('2 weeks')).toBeUndefined();
    expect(formatDuration(7_200_000)).toBe('2h');
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(1500)).toBe('1500ms');
  });

  it('reads decimal and binary sizes in any case', () => {
    expect(parseByteSize('100MiB')).toBe(100 * 1024 ** 2);
    expect(parseByteSize('1gb')).toBe(1e9);
    expect(parseByteSize('512')).toBe(512);
    expect(parseByteSize('1 TB')).toBeUndefined();
    expect(formatByteSize(1024 ** 3)).toBe('1GiB');
    expect(formatByteSize(1000)).toBe('1000B');
  });
});

describe('rates', () => {
  it('reads calls per second, minute or hour', () => {
    expect(parseRate('600/min')).toEqual({ count: 600, perMs: 60_000 });
    expect(parseRate('10/s')).toEqual({ count: 10, perMs: 1000 });
    expect(parseRate(' 5000 / hour ')).toEqual({ count: 5000, perMs: 3_600_000 });
    expect(parseRate('0/min')).toBeUndefined();
    expect(parseRate('600 per minute')).toBeUndefined();
  });

  it('pace: auto concurrency and no rate by default; pace.rate and a folder rate read as calls per period', () => {
    const plain = agentConfigSchema.parse({ service: SERVICE, folders: [FOLDER] });
    expect(plain.pace).toEqual({ concurrency: 'auto', rate: undefined });
    expect(plain.folders[0]?.rate).toBeUndefined();
    const rated = agentConfigSchema.parse({
      service: SERVICE,
      pace: { concurrency: '8', rate: '600/min' },
      folders: [{ ...FOLDER, rate: '10/s' }],
    });
    expect(rated.pace).toEqual({ concurrency: 8, rate: { count: 600, perMs: 60_000 } });
    expect(rated.folders[0]?.rate).toEqual({ count: 10, perMs: 1000 });
  });

  it('refuses a rate it cannot read, naming the key', () => {
    const bad = parse({ service: SERVICE, pace: { rate: 'fast' }, folders: [{ ...FOLDER, rate: '10/day' }] });
    expect(bad.success).toBe(false);
    const paths = bad.error?.issues.map((i) => i.path.join('.'));
    expect(paths).toContain('pace.rate');
    expect(paths).toContain('folders.0.rate');
  });
});

describe('agentConfigSchema', () => {
  it('fills every default of a minimal configuration', () => {
    const config = agentConfigSchema.parse({ service: SERVICE, folders: [FOLDER] });
    expect(config).toMatchObject({
      version: 1,
      sandbox: { enabled: false, stateDir: './var/sandbox', speed: 1, uploadWindowMs: 7_200_000 },
      stateDir: './var/state',
      concurrency: 4,
      maxFileBytes: 1024 ** 3,
      shutdownGraceMs: 30_000,
      log: { level: 'info' },
    });
    expect(config.service?.timeouts).toEqual({
      connectMs: 10_000,
      headersMs: 60_000,
      bodyMs: 60_000,
      keepAliveMs: 30_000,
    });
    const folder = config.folders[0];
    expect(folder).toMatchObject({
      enabled: true,
      source: { type: 'local', path: 'in/invoices', usePolling: false, pollIntervalMs: 2000 },
      include: ['*'],
      stability: { kind: 'settle', settleMs: 2000 },
      concurrency: 2,
      allowDuplicates: false,
      onInvalidRow: 'reject-file',
      payloadPdf: { pairing: 'sidecar', sidecarExtension: '.json', indexFile: 'index.csv' },
      archiveDir: 'in/invoices/.archive',
      errorDir: 'in/invoices/.error',
    });
    expect(folder?.exclude).toContain('*.part');
    expect(folder?.mode).toBeUndefined();
    expect(folder?.managedCompanyId).toBeUndefined();
  });

  it('takes durations, sizes, numbers and booleans as text (what env substitution yields)', () => {
    const config = agentConfigSchema.parse({
      service: { ...SERVICE, timeouts: { connectMs: '5s' } },
      concurrency: '8',
      maxFileBytes: '100MiB',
      shutdownGraceMs: 45_000,
      folders: [
        {
          ...FOLDER,
          enabled: 'false',
          concurrency: '3',
          source: { ...FOLDER.source, usePolling: 'true', pollIntervalMs: '10s' },
          stability: { kind: 'settle', settleMs: '500ms' },
        },
      ],
    });
    expect(config.concurrency).toBe(8);
    expect(config.maxFileBytes).toBe(100 * 1024 ** 2);
    expect(config.shutdownGraceMs).toBe(45_000);
    expect(config.service?.timeouts.connectMs).toBe(5000);
    expect(config.folders[0]).toMatchObject({
      enabled: false,
      concurrency: 3,
      source: { usePolling: true, pollIntervalMs: 10_000 },
      stability: { settleMs: 500 },
    });
  });

  it('fills the defaults of the done-marker rule and accepts rename-in', () => {
    const config = agentConfigSchema.parse({
      service: SERVICE,
      folders: [
        { ...FOLDER, stability: { kind: 'done-marker' } },
        { ...FOLDER, name: 'b', source: { type: 'local', path: 'b' }, stability: { kind: 'rename-in' } },
      ],
    });
    expect(config.folders[0]?.stability).toEqual({ kind: 'done-marker', suffixes: ['.done', '.ready'] });
    expect(config.folders[1]?.stability).toEqual({ kind: 'rename-in' });
  });

  it('reads recursive: off by default, true as the default depth, { depth } from 1 to 16', () => {
    const folderOf = (extra: Record<string, unknown>) =>
      agentConfigSchema.parse({ service: SERVICE, folders: [{ ...FOLDER, ...extra }] }).folders[0]?.recursive;
    expect(folderOf({})).toBeUndefined();
    expect(folderOf({ recursive: false })).toBeUndefined();
    expect(folderOf({ recursive: true })).toEqual({ depth: 4 });
    expect(folderOf({ recursive: 'true' })).toEqual({ depth: 4 });
    expect(folderOf({ recursive: { depth: 2 } })).toEqual({ depth: 2 });
    expect(folderOf({ recursive: {} })).toEqual({ depth: 4 });
    for (const bad of [{ depth: 0 }, { depth: 17 }, { depth: 2, follow: true }, 'yes']) {
      expect(parse({ service: SERVICE, folders: [{ ...FOLDER, recursive: bad }] }).success, String(bad)).toBe(
        false,
      );
    }
  });

  it('keeps configured archive and error folders instead of deriving them', () => {
    const config = agentConfigSchema.parse({
      service: SERVICE,
      folders: [{ ...FOLDER, archiveDir: '/srv/archive', errorDir: '/srv/error' }],
    });
    expect(config.folders[0]).toMatchObject({ archiveDir: '/srv/archive', errorDir: '/srv/error' });
  });

  it('needs a service unless the sandbox is enabled, and refuses both together', () => {
    expect(parse({}).error?.issues.map((i) => i.path.join('.'))).toEqual(['service']);
    expect(parse({ sandbox: { enabled: true } }).success).toBe(true);
    const both = parse({ sandbox: { enabled: true }, service: SERVICE });
    expect(both.error?.issues[0]?.message).toMatch(/must be absent when sandbox.enabled/);
  });

  it("takes the sandbox's names profile, spec by default, and refuses any other", () => {
    expect(parse({ sandbox: { enabled: true } }).data?.sandbox.names).toBe('spec');
    expect(parse({ sandbox: { enabled: true, names: 'reference' } }).data?.sandbox.names).toBe('reference');
    expect(parse({ sandbox: { enabled: true, names: 'live' } }).error?.issues[0]?.path).toEqual([
      'sandbox',
      'names',
    ]);
  });

  it('refuses unknown options, duplicate folder names, plain-http URLs and bad values', () => {
    const result = parse({
      service: { ...SERVICE, apiUrl: 'http://api.example.test' },
      folders: [
        { ...FOLDER, stabilty: { kind: 'settle' } },
        { ...FOLDER, name: 'INVOICES', source: { type: 'local', path: 'other' }, concurrency: 0 },
        { ...FOLDER, name: 'c', source: { type: 'ftp', path: 'x' } },
        { ...FOLDER, name: 'has space', mode: 'payload-excel' },
      ],
    });
    const paths = result.error?.issues.map((i) => i.path.join('.')) ?? [];
    expect(paths).toEqual(
      expect.arrayContaining([
        'service.apiUrl',
        'folders.0',
        'folders.1.concurrency',
        'folders.2.source.type',
        'folders.3.name',
        'folders.3.mode',
      ]),
    );
    expect(result.error?.issues.find((i) => i.code === 'unrecognized_keys')).toMatchObject({
      keys: ['stabilty'],
    });
  });

  it('reports duplicate names once the folders themselves are valid', () => {
    const result = parse({
      service: SERVICE,
      folders: [FOLDER, { ...FOLDER, name: 'Invoices', source: { type: 'local', path: 'other' } }],
    });
    expect(result.error?.issues).toEqual([
      expect.objectContaining({ path: ['folders', 1, 'name'], message: 'same name as folders[0]' }),
    ]);
  });
});
