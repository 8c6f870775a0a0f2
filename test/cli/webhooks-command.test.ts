import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerResendCommand } from '../../src/cli/resend-command.js';
import { EVENT_TYPE_CHOICES, registerWebhooksCommand } from '../../src/cli/webhooks-command.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/wire.js';
import type { InboxStore } from '../../src/returns/inbox-store.js';
import { SqliteInboxStore } from '../../src/returns/sqlite-inbox-store.js';
import { WebhookReceiver } from '../../src/returns/webhook-receiver.js';
import { SecretRing, webhookSecretsDir } from '../../src/returns/webhook-secrets.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { waitFor } from '../support/wait-for.js';
import { runCli } from './support/run-cli.js';

let t: TestSandbox;
let dir: string;
let config: string;
let stateDir: string;
let store: InboxStore;
let receiver: WebhookReceiver;
let received = 0;

const cli = (...args: string[]) =>
  runCli((program, deps) => {
    registerWebhooksCommand(program, deps);
    registerResendCommand(program, deps);
  }, args);

beforeAll(async () => {
  t = await startTestSandbox();
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhooks-cli-'));
  config = t.sandbox.paths.agentConfigFragment;
  stateDir = path.join(dir, 'state');
  store = SqliteInboxStore.open(path.join(stateDir, 'inbox.sqlite'), new ManualClock(0));
  // The agent's receiver, reading the secrets the commands store.
  receiver = await WebhookReceiver.start({
    host: '127.0.0.1',
    port: 0,
    path: '/hook',
    maxBodyBytes: 65_536,
    toleranceMs: 300_000,
    secrets: new SecretRing(webhookSecretsDir(stateDir), [], silentLogger()),
    remember: (id, type) => store.rememberWebhook(id, type, 86_400_000),
    onDelivery: () => {
      received++;
    },
    log: silentLogger(),
  });
});

afterAll(async () => {
  await receiver?.stop();
  await store?.close();
  await t?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function secretFiles(): string[] {
  const d = webhookSecretsDir(stateDir);
  return existsSync(d) ? readdirSync(d).sort() : [];
}

describe('docex-agent webhooks', () => {
  it('create stores the secret 0600 in the state folder, and the running receiver accepts the test event', async () => {
    const run = await cli(
      'webhooks',
      'create',
      '--config',
      config,
      '--state-dir',
      stateDir,
      '-o',
      'json',
      '--url',
      receiver.url,
      '--events',
      'job.status.changed',
      'peppol.document.received',
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const created = JSON.parse(run.stdout);
    expect(created).toMatchObject({ url: receiver.url, enabled: true });
    expect(created.secret).toBeUndefined();
    expect(run.stderr).toContain('mode 0600');
    expect(secretFiles()).toEqual([`${created.id}.secret`]);
    const file = path.join(webhookSecretsDir(stateDir), `${created.id}.secret`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^whsec_/);

    const test = await cli(
      'webhooks',
      'test',
      created.id,
      '--config',
      config,
      '--event',
      'job.status.changed',
    );
    expect(test.exitCode, test.stderr).toBe(0);
    expect(test.stdout).toMatch(/status\s+202/);

    // reset-secret: the new secret is stored and used at once, without restarting the receiver.
    const reset = await cli(
      'webhooks',
      'reset-secret',
      created.id,
      '--config',
      config,
      '--state-dir',
      stateDir,
    );
    expect(reset.exitCode, reset.stderr).toBe(0);
    expect(secretFiles()).toEqual([`${created.id}.previous.secret`, `${created.id}.secret`]);
    expect(readFileSync(file, 'utf8')).not.toBe(
      readFileSync(`${file.replace(/\.secret$/, '')}.previous.secret`, 'utf8'),
    );
    const before = received;
    const again = await cli(
      'webhooks',
      'test',
      created.id,
      '--config',
      config,
      '--event',
      'peppol.document.received',
    );
    expect(again.exitCode, again.stderr).toBe(0);
    // The receiver hands a delivery over after its answer: wait for it rather than for a while.
    await waitFor(() => received > before);
    expect(received).toBe(before + 1);

    const list = await cli('webhooks', 'list', '--config', config, '-o', 'json');
    const listed = JSON.parse(list.stdout).items.find((s: { id: string }) => s.id === created.id);
    expect(listed).toMatchObject({ eventTypes: ['job.status.changed', 'peppol.document.received'] });
    expect(list.stdout).not.toContain('whsec_');

    const update = await cli('webhooks', 'update', created.id, '--config', config, '--disable', '-o', 'json');
    expect(JSON.parse(update.stdout)).toMatchObject({ id: created.id, enabled: false });

    const del = await cli('webhooks', 'delete', created.id, '--config', config, '--state-dir', stateDir);
    expect(del.exitCode, del.stderr).toBe(0);
    expect(secretFiles()).toEqual([]);
    const after = await cli('webhooks', 'list', '--config', config, '-o', 'json');
    expect(after.stdout).not.toContain(created.id);
  });

  it('--print-secret prints the secret once and stores nothing', async () => {
    const run = await cli(
      'webhooks',
      'create',
      '--config',
      config,
      '--state-dir',
      path.join(dir, 'other'),
      '--print-secret',
      '--url',
      'https://erp.example.com/hook',
      '--events',
      'sending.event.status.changed',
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^secret: whsec_\S+$/m);
    expect(run.stderr).toContain('not stored');
    expect(existsSync(path.join(dir, 'other'))).toBe(false);
  });

  it('test exits 1 with DOCEX_WEBHOOK_TEST_FAILED when the subscriber refuses', async () => {
    const create = await cli(
      'webhooks',
      'create',
      '--config',
      config,
      '--print-secret',
      '-o',
      'json',
      '--url',
      receiver.url.replace('/hook', '/elsewhere'),
      '--events',
      'job.status.changed',
    );
    const id = JSON.parse(create.stdout.split('\nsecret:')[0]!).id as string;
    const run = await cli('webhooks', 'test', id, '--config', config);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/status\s+404/);
    expect(run.stderr).toMatch(/^error DOCEX_WEBHOOK_TEST_FAILED: the subscriber answered 404/m);
  });

  it('update without a change, or with --enable and --disable, is a usage error', async () => {
    expect((await cli('webhooks', 'update', 'wh_x', '--config', config)).stderr).toMatch(
      /DOCEX_CLI_USAGE: nothing to change/,
    );
    expect(
      (await cli('webhooks', 'update', 'wh_x', '--config', config, '--enable', '--disable')).stderr,
    ).toMatch(/DOCEX_CLI_USAGE/);
  });

  it('a sandbox configuration whose sandbox never ran is refused with DOCEX_CLI_USAGE', async () => {
    const file = path.join(dir, 'sandbox.yaml');
    writeFileSync(file, `sandbox:\n  enabled: true\n  stateDir: ./never-ran\n`);
    const run = await cli('webhooks', 'list', '--config', file);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^error DOCEX_CLI_USAGE: .*has not run yet/);
  });

  it('offers exactly the event types of the wire schema', () => {
    expect([...EVENT_TYPE_CHOICES]).toEqual([...WEBHOOK_EVENT_TYPES]);
  });
});

describe('docex-agent webhooks against the live reference names (named subscriptions)', () => {
  let ref: TestSandbox;
  beforeAll(async () => {
    ref = await startTestSandbox({ names: 'reference' });
  });
  afterAll(async () => {
    await ref?.stop();
  });

  it('create --name sends the name, list shows it, update --name renames; without --name it sends docex-agent', async () => {
    const refConfig = ref.sandbox.paths.agentConfigFragment;
    const create = (...extra: string[]) =>
      cli(
        'webhooks',
        'create',
        '--config',
        refConfig,
        '--print-secret',
        '-o',
        'json',
        '--url',
        'https://erp.example.com/hook',
        '--events',
        'sending.event.status.changed',
        ...extra,
      );
    const named = await create('--name', 'ERP statuses');
    expect(named.exitCode, named.stderr).toBe(0);
    const id = JSON.parse(named.stdout.split('\nsecret:')[0]!).id as string;
    const unnamed = await create();
    expect(unnamed.exitCode, unnamed.stderr).toBe(0);
    const defaultId = JSON.parse(unnamed.stdout.split('\nsecret:')[0]!).id as string;

    const json = await cli('webhooks', 'list', '--config', refConfig, '-o', 'json');
    const items = JSON.parse(json.stdout).items as { id: string; name: string }[];
    expect(items.find((s) => s.id === id)?.name).toBe('ERP statuses');
    expect(items.find((s) => s.id === defaultId)?.name).toBe('docex-agent');
    const table = await cli('webhooks', 'list', '--config', refConfig);
    expect(table.stdout.split('\n')[0]).toMatch(/^id\s+name\s+url/);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+ERP statuses\\s+https://erp`));

    const renamed = await cli('webhooks', 'update', id, '--config', refConfig, '--name', 'ERP', '-o', 'json');
    expect(JSON.parse(renamed.stdout)).toMatchObject({ id, name: 'ERP' });
    await expect(create('--name', ' ')).rejects.toThrow('the name must not be empty');
  });
});
