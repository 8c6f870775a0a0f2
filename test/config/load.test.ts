// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tests write ${env:} and ${file:} references literally
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { REDACTED, redactedConfig } from '../../src/config/redact.js';
import { thrownDocex } from '../api/support/caught.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, content: string, mode = 0o600): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

/** A valid configuration whose service block uses the given secret values. */
function configText(secret: string, apiKey: string, extra = ''): string {
  return `
service:
  apiUrl: https://api.example.test/v1
  authUrl: https://auth.example.test
  clientId: agent-client
  clientSecret: "${secret}"
  apiKey: "${apiKey}"
  tls: { caFile: tls/ca.pem, certFile: tls/client.pem, keyFile: tls/client.key }
${extra}`;
}

describe('loadConfig', () => {
  it('substitutes ${env:NAME} and ${file:PATH}, the file relative to the config and without one trailing newline', () => {
    write('secrets/api-key', 'key-from-file\n\n');
    const file = write('agent.yaml', configText('${env:TEST_SECRET}', '${file:secrets/api-key}'));
    const { config, warnings } = loadConfig(file, { env: { TEST_SECRET: 'secret-from-env' } });
    expect(config.service?.clientSecret).toBe('secret-from-env');
    expect(config.service?.apiKey).toBe('key-from-file\n');
    expect(warnings).toEqual([]);
  });

  it('substitutes inside longer text, keeps $${ as a literal ${ and does not re-read substituted values', () => {
    const file = write(
      'agent.yaml',
      configText('pre-${env:A}-post', 'literal-$${env:A}', 'stateDir: ./${env:B}/state\n'),
    );
    const { config } = loadConfig(file, { env: { A: 'x', B: '${env:A}' } });
    expect(config.service?.clientSecret).toBe('pre-x-post');
    expect(config.service?.apiKey).toBe('literal-${env:A}');
    expect(config.stateDir).toBe(path.join(dir, '${env:A}', 'state'));
  });

  it('names the config path and the variable when an environment variable is not set', () => {
    const file = write('agent.yaml', configText('${env:DOCEX_TEST_UNSET}', 'k'));
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_ENV');
    expect(err.message).toBe('service.clientSecret: environment variable DOCEX_TEST_UNSET is not set');
  });

  it('refuses an unreadable ${file:} with DOCEX_CONFIG_FILE naming the file', () => {
    const file = write('agent.yaml', configText('s', '${file:missing/api-key}'));
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_FILE');
    expect(err.message).toContain(path.join(dir, 'missing/api-key'));
    expect(err.message).toContain('ENOENT');
  });

  it('refuses a secret file readable by group or others, naming the path and not the content', () => {
    const secretFile = write('api-key', 'do-not-print-me', 0o644);
    const file = write('agent.yaml', configText('s', '${file:api-key}'));
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_SECRET_PERMISSIONS');
    expect(err.message).toContain(secretFile);
    expect(err.message).toContain('0644');
    expect(JSON.stringify(err.toJSON())).not.toContain('do-not-print-me');

    chmodSync(secretFile, 0o640);
    expect(thrownDocex(() => loadConfig(file, { env: {} })).code).toBe('DOCEX_CONFIG_SECRET_PERMISSIONS');
    chmodSync(secretFile, 0o400);
    expect(loadConfig(file, { env: {} }).config.service?.apiKey).toBe('do-not-print-me');
  });

  it('refuses an unknown kind of reference', () => {
    const file = write('agent.yaml', configText('${vault:secret/x}', 'k'));
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_INVALID');
    expect(err.message).toContain('service.clientSecret: unknown reference ${vault:secret/x}');
  });

  it('lists every schema problem as a readable line with its path', () => {
    const file = write(
      'agent.yaml',
      configText(
        's',
        'k',
        `
folders:
  - name: ok
    source: { type: local, path: in/ok }
    workflowId: wf_pdf_email
  - name: broken
    source: { type: local, path: in/broken }
    stabilty: { kind: settle }
    stability: { kind: settle, settleMs: soon }
    concurrency: 0
`,
      ),
    );
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_INVALID');
    expect(err.details?.['problems']).toEqual([
      'folders[1].workflowId: Required',
      'folders[1].stability.settleMs: expected a duration such as 500ms, 2s, 10m, 2h or 1d',
      'folders[1].concurrency: Too small: expected number to be >=1',
      'folders[1].stabilty: unknown option',
    ]);
    expect(err.message).toContain(`invalid configuration ${file}:\n  folders[1].workflowId: Required`);
  });

  it('reports YAML syntax errors with their line, without quoting the line', () => {
    const file = write('agent.yaml', 'service:\n  clientSecret: [inline-secret\n');
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_YAML');
    expect(err.message).toMatch(/at line \d+, column \d+$/);
    expect(JSON.stringify(err.toJSON())).not.toContain('inline-secret');
  });

  it('refuses a missing configuration file with DOCEX_CONFIG_FILE', () => {
    const err = thrownDocex(() => loadConfig(path.join(dir, 'nope.yaml')));
    expect(err.code).toBe('DOCEX_CONFIG_FILE');
  });

  it('resolves relative paths against the folder of the configuration file', () => {
    const file = write(
      'etc/agent.yaml',
      configText(
        's',
        'k',
        `
folders:
  - name: a
    source: { type: local, path: ../in/a }
    workflowId: wf_pdf_email
    errorDir: /srv/errors/a
`,
      ),
    );
    const { config } = loadConfig(file, { env: {} });
    const etc = path.join(dir, 'etc');
    expect(config.stateDir).toBe(path.join(etc, 'var/state'));
    expect(config.sandbox.stateDir).toBe(path.join(etc, 'var/sandbox'));
    expect(config.service?.tls).toEqual({
      caFile: path.join(etc, 'tls/ca.pem'),
      certFile: path.join(etc, 'tls/client.pem'),
      keyFile: path.join(etc, 'tls/client.key'),
    });
    expect(config.folders[0]).toMatchObject({
      source: { path: path.join(dir, 'in/a') },
      archiveDir: path.join(dir, 'in/a/.archive'),
      errorDir: '/srv/errors/a',
    });
  });

  it('refuses two folders on one path and an archive that another folder watches', () => {
    const file = write(
      'agent.yaml',
      configText(
        's',
        'k',
        `
folders:
  - { name: a, source: { type: local, path: in/a }, workflowId: w1, archiveDir: ./in/b }
  - { name: b, source: { type: local, path: ./in/b/ }, workflowId: w2 }
  - { name: c, source: { type: local, path: in/../in/b }, workflowId: w3 }
`,
      ),
    );
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.details?.['problems']).toEqual([
      'folders[2].source.path: same folder as folders[1]',
      'folders[0].archiveDir: is the source folder of folders[1]: its files would be sent again',
    ]);
  });

  it('warns when a secret is written inline', () => {
    const file = write('agent.yaml', configText('inline-secret', '${env:KEY}'));
    const { warnings } = loadConfig(file, { env: { KEY: 'k' } });
    expect(warnings).toEqual([
      'service.clientSecret is written inline; use ${env:NAME} or ${file:PATH} to keep it out of the file',
    ]);
    expect(warnings.join()).not.toContain('inline-secret');
  });
});

describe('redactedConfig', () => {
  it('replaces the client secret and API key and keeps everything else', () => {
    write('api-key', 'the-api-key');
    const file = write('agent.yaml', configText('${env:S}', '${file:api-key}'));
    const { config } = loadConfig(file, { env: { S: 'the-client-secret' } });
    const shown = redactedConfig(config);
    const text = JSON.stringify(shown);
    expect(text).not.toContain('the-client-secret');
    expect(text).not.toContain('the-api-key');
    expect(shown.service).toMatchObject({
      clientSecret: REDACTED,
      apiKey: REDACTED,
      clientId: 'agent-client',
    });
    expect(config.service?.clientSecret).toBe('the-client-secret');
  });

  it('hides webhook receiver secrets', () => {
    const shown = JSON.stringify(redactedConfig({ webhooks: { secrets: ['whsec_c2VjcmV0'] } } as never));
    expect(shown).not.toContain('whsec_c2VjcmV0');
  });
});
