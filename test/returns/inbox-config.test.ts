import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseListen, peppolInboxSchema, webhooksSchema } from '../../src/config/inbound-schema.js';
import { parseConfig } from '../../src/config/index.js';

const deps = { baseDir: '/etc/docex', env: { SECRET: 'whsec_c2VjcmV0' }, readSecretFile: () => '' };

describe('peppolInbox and webhooks configuration', () => {
  it('defaults: inbox on every 5 minutes with a 15-minute overlap, receiver off on loopback', () => {
    expect(peppolInboxSchema.parse(undefined)).toEqual({
      enabled: true,
      target: { type: 'local', path: '<stateDir>/out/peppol-inbox' },
      schedule: '*/5 * * * *',
      overlapMs: 15 * 60_000,
      quietWhileWebhooksMs: 3_600_000,
      pageSize: 100,
    });
    expect(webhooksSchema.parse(undefined)).toEqual({
      enabled: false,
      listen: '127.0.0.1:8090',
      path: '/docex/webhooks',
      maxBodyBytes: 256 * 1024,
      toleranceMs: 300_000,
      secrets: [],
    });
  });

  it('resolves a local inbox folder against the configuration file and reads secrets through env references', () => {
    const { config } = parseConfig(
      [
        'sandbox: { enabled: true }',
        'peppolInbox: { target: { type: local, path: ./inbox }, schedule: "0 * * * *", overlapMs: 1h }',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own ${env:} syntax
        'webhooks: { enabled: true, listen: "[::1]:9000", secrets: ["${env:SECRET}"] }',
      ].join('\n'),
      deps,
    );
    expect(config.peppolInbox.target.path).toBe(path.resolve('/etc/docex/inbox'));
    expect(config.peppolInbox.overlapMs).toBe(3_600_000);
    expect(config.webhooks.secrets).toEqual(['whsec_c2VjcmV0']);
    expect(parseListen(config.webhooks.listen)).toEqual({ host: '::1', port: 9000 });
  });

  it('refuses a schedule that is not a cron expression, a listen without port and a relative path', () => {
    const bad = peppolInboxSchema.safeParse({ schedule: 'every five minutes' });
    expect(bad.error?.issues[0]?.path).toEqual(['schedule']);
    expect(webhooksSchema.safeParse({ listen: '127.0.0.1' }).success).toBe(false);
    expect(webhooksSchema.safeParse({ path: 'hooks' }).success).toBe(false);
    expect(webhooksSchema.safeParse({ maxBodyBytes: '0' }).success).toBe(false);
  });
});
