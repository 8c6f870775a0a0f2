import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAdminCommand } from '../../src/cli/admin-command.js';
import { loadServiceConnection } from '../../src/cli/service-connection.js';
import { registerUsageCommand } from '../../src/cli/usage-command.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { addUsageEvents, departmentBody, userBody } from '../sandbox/admin/admin-harness.js';
import { runCli } from './support/run-cli.js';

let dir: string;
let sandbox: RunningSandbox;
let config: string;
const M = SEED.managedCompanyId;

const cli = (...args: string[]) =>
  runCli((program, deps) => {
    registerAdminCommand(program, deps);
    registerUsageCommand(program, deps);
  }, args);

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-admin-cli-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'state'), log: silentLogger() });
  config = sandbox.paths.agentConfigFragment;
});

afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('service connection file', () => {
  it("reads the sandbox's fragment, resolving file-referenced secrets and the Interface B block", () => {
    const conn = loadServiceConnection(config);
    const c = sandbox.credentials;
    expect(conn.admin).toEqual({
      apiUrl: sandbox.urls.admin,
      authUrl: sandbox.urls.admin,
      clientId: c.admin.clientId,
      clientSecret: c.admin.clientSecret,
      apiKey: c.apiKey,
    });
    expect(conn.clientSecret).toBe(c.clientSecret);
    expect(conn.tls.ca).toBe(c.caCertPem);
    // The fragment itself holds references, never the secrets.
    const text = readFileSync(config, 'utf8');
    expect(text).not.toContain(c.admin.clientSecret);
    expect(text).not.toContain(c.apiKey);
  });

  it('reports a file without the admin block as DOCEX_CONFIG_INVALID on stderr with exit code 1', async () => {
    const bare = path.join(dir, 'bare.yaml');
    const text = readFileSync(config, 'utf8').replace(/\n {2}admin:[\s\S]*$/, '\n');
    writeFileSync(bare, text);
    const run = await cli('admin', 'companies', 'list', '--config', bare);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^error DOCEX_CONFIG_INVALID: .*service\.admin/);
  });
});

describe('docex-agent admin', () => {
  it('lists companies as a table, one page at a time, and all of them as JSON', async () => {
    const table = await cli('admin', 'companies', 'list', '--config', config, '--max-items', '1');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+name\s+role\s+erpId\s+isActive$/);
    expect(lines[2]).toMatch(
      new RegExp(`^${SEED.partnerCompanyId}\\s+Partner Integrations NV\\s+TECHNOLOGY_PARTNER`),
    );
    expect(lines).toHaveLength(3);
    const cursor = /more: --cursor (\S+)/.exec(table.stderr)?.[1];
    expect(cursor).toBeDefined();
    const next = await cli(
      'admin',
      'companies',
      'list',
      '-c',
      config,
      '--max-items',
      '1',
      '--cursor',
      cursor ?? '',
      '-o',
      'json',
    );
    expect(JSON.parse(next.stdout).items.map((c: { id: string }) => c.id)).toEqual([M]);

    const all = await cli(
      'admin',
      'companies',
      'list',
      '-c',
      config,
      '--max-items',
      '1',
      '--all',
      '-o',
      'json',
    );
    expect(JSON.parse(all.stdout).items.map((c: { id: string }) => c.id)).toEqual([
      SEED.partnerCompanyId,
      M,
      SEED.secondManagedCompanyId,
    ]);
    const role = await cli(
      'admin',
      'companies',
      'list',
      '-c',
      config,
      '--role',
      'MANAGED_COMPANY',
      '-o',
      'json',
    );
    expect(JSON.parse(role.stdout).items.map((c: { id: string }) => c.id)).toEqual([
      M,
      SEED.secondManagedCompanyId,
    ]);
  });

  it('shows one record as a field/value table and reports a refused company with exit code 1', async () => {
    const one = await cli('admin', 'companies', 'get', M, '-c', config);
    expect(one.stdout).toMatch(/^field\s+value\n/);
    expect(one.stdout).toMatch(/\nname\s+Managed Client BV\n/);
    const refused = await cli('admin', 'companies', 'get', SEED.otherCompanyId, '-c', config);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/^error DOCEX_API_403: GET \/api\/companies\/\{id\} answered 403/);
    expect(refused.stderr).not.toContain(sandbox.credentials.admin.clientSecret);
  });

  it('creates a department from --data and a user from @file, resets its password and deletes both', async () => {
    const { companyId: _c, ...dep } = departmentBody(M);
    const created = await cli(
      'admin',
      'departments',
      'create',
      '--company',
      M,
      '--data',
      JSON.stringify(dep),
      '-c',
      config,
      '-o',
      'json',
    );
    expect(created.exitCode).toBe(0);
    const depId = JSON.parse(created.stdout).id as string;
    const file = path.join(dir, 'user.json');
    writeFileSync(file, JSON.stringify(userBody(M, [depId])));
    const user = JSON.parse(
      (
        await cli(
          'admin',
          'users',
          'create',
          '--company',
          M,
          '--data',
          `@${file}`,
          '-c',
          config,
          '-o',
          'json',
        )
      ).stdout,
    );
    expect(user).toMatchObject({ companyId: M, departments: [depId] });
    const reset = await cli(
      'admin',
      'users',
      'reset-password',
      user.id,
      '--company',
      M,
      '-c',
      config,
      '-o',
      'json',
    );
    expect(JSON.parse(reset.stdout)).toEqual({ success: true });
    const users = await cli('admin', 'users', 'list', '--company', M, '--all', '-c', config);
    expect(users.stdout).toContain(user.id);
    await cli(
      'admin',
      'users',
      'update',
      user.id,
      '--company',
      M,
      '--data',
      '{"enabled":false}',
      '-c',
      config,
    );
    const got = JSON.parse(
      (await cli('admin', 'users', 'get', user.id, '--company', M, '-c', config, '-o', 'json')).stdout,
    );
    expect(got.enabled).toBe(false);
    expect(
      (await cli('admin', 'users', 'delete', user.id, '--company', M, '-c', config, '-o', 'json')).stdout,
    ).toContain('true');
    expect((await cli('admin', 'departments', 'delete', depId, '--company', M, '-c', config)).exitCode).toBe(
      0,
    );
  });

  it('creates a report, prints its download URL as a bare string, finds it, and manages news items', async () => {
    const created = JSON.parse(
      (
        await cli(
          'admin',
          'reports',
          'create',
          '--company',
          M,
          '--type',
          'USAGE',
          '--from',
          '2026-01-01',
          '--until',
          '2026-02-01',
          '-c',
          config,
          '-o',
          'json',
        )
      ).stdout,
    );
    expect(created).toMatchObject({ id: expect.any(String), url: expect.stringMatching(/^https:/) });
    const url = await cli('admin', 'reports', 'download-url', created.id, '--company', M, '-c', config);
    expect(url.stdout).toMatch(/^https:\/\/\S+\/download\/\S+\n$/);
    const found = await cli('admin', 'reports', 'search', '--company', M, '--type', 'USAGE', '-c', config);
    expect(found.stdout).toMatch(new RegExp(`${created.id}\\s+USAGE\\s+READY`));
    expect(
      (await cli('admin', 'reports', 'get', created.id, '--company', M, '-c', config, '-o', 'json')).stdout,
    ).toContain('READY');
    expect((await cli('admin', 'reports', 'delete', created.id, '--company', M, '-c', config)).exitCode).toBe(
      0,
    );

    const item = JSON.parse(
      (
        await cli(
          'admin',
          'news',
          'create',
          '--title',
          'Hi',
          '--body',
          'Text',
          '--language',
          'EN',
          '-c',
          config,
          '-o',
          'json',
        )
      ).stdout,
    );
    expect(item).toMatchObject({ title: 'Hi', language: 'EN' });
    const gone = await cli('admin', 'news', 'delete', item.id, '-c', config, '-o', 'json');
    expect(JSON.parse(gone.stdout)).toEqual({ success: true });
  });
});

describe('docex-agent usage export', () => {
  it('pages through every usage event of the range into CSV, and admin usage details shows them', async () => {
    const partner = addUsageEvents(sandbox, SEED.partnerCompanyId, 3, '2026-05-02T10:00:00.000Z');
    const managed = addUsageEvents(sandbox, M, 2, '2026-05-03T10:00:00.000Z', SEED.managedDepartmentId);
    addUsageEvents(sandbox, SEED.otherCompanyId, 2, '2026-05-04T10:00:00.000Z');
    const run = await cli(
      'usage',
      'export',
      '--from',
      '2026-05-01',
      '--until',
      '2026-06-01',
      '--page-size',
      '2',
      '-c',
      config,
    );
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split('\r\n');
    expect(lines[0]).toBe('id,timestamp,companyId,departmentId,jobId,sendingEventId,channel,unit,quantity');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1).map((l) => l.split(',')[0])).toEqual([...partner, ...managed]);
    expect(lines[4]).toBe(
      `${managed[0]},2026-05-03T10:00:00.000Z,${M},${SEED.managedDepartmentId},job_0,se_0,EMAIL,SENDING,1`,
    );
    expect(run.stderr).toBe('exported 5 usage events\n');

    const one = await cli(
      'usage',
      'export',
      '--from',
      '2026-05-01',
      '--until',
      '2026-06-01',
      '--company',
      M,
      '-c',
      config,
    );
    expect(
      one.stdout
        .split('\r\n')
        .slice(1, -1)
        .map((l) => l.split(',')[0]),
    ).toEqual(managed);

    const details = await cli(
      'admin',
      'usage',
      'details',
      '--from',
      '2026-05-01',
      '--until',
      '2026-06-01',
      '--company',
      M,
      '-c',
      config,
    );
    expect(details.stdout).toContain(managed[1]);
    const bad = await cli('usage', 'export', '--from', '2026-06-01', '--until', '2026-05-01', '-c', config);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/^error DOCEX_API_400/);
  });
});
