import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { agentConfigSchema } from '../../src/config/schema.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-returns-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('returns configuration', () => {
  it('defaults: following on, every 5 s, concurrency paced by the service with no call budget, both proof types, the nightly CSV', () => {
    const { returns } = agentConfigSchema.parse({ sandbox: { enabled: true }, stateDir: '/var/lib/docex' });
    expect(returns).toMatchObject({
      enabled: true,
      follow: {
        schedule: '*/5 * * * * *',
        firstPollMs: 10_000,
        concurrency: 'auto',
        maxCallsPerMinute: undefined,
        maxIntervalMs: 900_000,
      },
      statuses: {
        target: { type: 'local', path: '/var/lib/docex/out/statuses' },
        dailyCsvSchedule: '5 0 * * *',
      },
      proofs: {
        target: { type: 'local', path: '/var/lib/docex/out/proofs' },
        documentTypes: ['DELIVERY_PROOF', 'SUBMISSION_REPORT'],
        nameTemplate: '<date>/<stem>/<sendingEventId>-<type>.<ext>',
      },
    });
  });

  it('refuses a schedule that is not a cron expression', () => {
    const result = agentConfigSchema.safeParse({
      sandbox: { enabled: true },
      returns: { follow: { schedule: 'often' } },
    });
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['returns.follow.schedule']);
  });

  it('puts the default outputs under the state folder, never beside the configuration file', () => {
    const file = path.join(dir, 'etc', 'agent.yaml');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `sandbox: { enabled: true }\nstateDir: ${path.join(dir, 'state')}\n`);
    const { config } = loadConfig(file, { env: {} });
    expect(config.returns.statuses.target).toMatchObject({
      path: path.join(dir, 'state', 'out', 'statuses'),
    });
    expect(config.returns.proofs.target).toMatchObject({ path: path.join(dir, 'state', 'out', 'proofs') });
    expect(config.peppolInbox.target).toMatchObject({ path: path.join(dir, 'state', 'out', 'peppol-inbox') });
  });

  it('reads <stateDir>/ at the start of a local output path as the state folder, relative or absolute', () => {
    const file = path.join(dir, 'etc', 'agent.yaml');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      'sandbox: { enabled: true }\nstateDir: ../state\nreturns:\n  proofs: { target: { type: local, path: <stateDir>/erp/proofs } }\n',
    );
    const { config } = loadConfig(file, { env: {} });
    expect(config.returns.proofs.target).toMatchObject({ path: path.join(dir, 'state', 'erp', 'proofs') });
  });

  it('resolves the output folders against the folder of the configuration file', () => {
    const file = path.join(dir, 'etc', 'agent.yaml');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      'sandbox: { enabled: true }\nreturns:\n  proofs: { target: { type: local, path: ../proofs } }\n',
    );
    const { config } = loadConfig(file, { env: {} });
    expect(config.returns.proofs.target).toMatchObject({ path: path.join(dir, 'proofs') });
    expect(config.returns.statuses.target).toMatchObject({
      path: path.join(dir, 'etc', 'var', 'state', 'out', 'statuses'),
    });
  });
});
