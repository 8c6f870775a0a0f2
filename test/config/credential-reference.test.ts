// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tests write ${credential:} references literally
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { thrownDocex } from '../api/support/caught.js';
import { guideServiceBlock } from '../support/guide-config.js';

let dir: string;
let credentials: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-cred-'));
  credentials = path.join(dir, 'credentials');
  mkdirSync(credentials, { mode: 0o500 });
});
afterEach(() => {
  chmodSync(credentials, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

/** A credential file as systemd's LoadCredential= leaves it (mode 0400 unless given). */
function credential(name: string, value: string, mode = 0o400): void {
  chmodSync(credentials, 0o700);
  writeFileSync(path.join(credentials, name), value, { mode });
  chmodSync(path.join(credentials, name), mode);
  chmodSync(credentials, 0o500);
}

function configFile(secret: string, apiKey: string, keyFile = 'tls/client.key'): string {
  const file = path.join(dir, 'agent.yaml');
  writeFileSync(
    file,
    `service:
  apiUrl: https://api.example.test/v1
  authUrl: https://auth.example.test
  clientId: agent-client
  clientSecret: "${secret}"
  apiKey: "${apiKey}"
  tls: { caFile: tls/ca.pem, certFile: tls/client.pem, keyFile: "${keyFile}" }
`,
    { mode: 0o600 },
  );
  return file;
}

describe('${credential:NAME} (systemd LoadCredential=)', () => {
  it('reads $CREDENTIALS_DIRECTORY/NAME without its trailing newline, and counts as referenced (no inline warning)', () => {
    credential('client-secret', 'secret-from-systemd\n');
    credential('api-key', 'key-from-systemd');
    const file = configFile('${credential:client-secret}', '${credential:api-key}');
    const { config, warnings } = loadConfig(file, { env: { CREDENTIALS_DIRECTORY: credentials } });
    expect(config.service?.clientSecret).toBe('secret-from-systemd');
    expect(config.service?.apiKey).toBe('key-from-systemd');
    expect(warnings).toEqual([]);
  });

  it('takes the TLS key path from ${env:CREDENTIALS_DIRECTORY}', () => {
    const file = configFile('s', 'k', '${env:CREDENTIALS_DIRECTORY}/client.key');
    const { config } = loadConfig(file, { env: { CREDENTIALS_DIRECTORY: credentials } });
    expect(config.service?.tls.keyFile).toBe(path.join(credentials, 'client.key'));
  });

  it('refuses a credential when CREDENTIALS_DIRECTORY is not set, naming LoadCredential= and the container way', () => {
    const file = configFile('${credential:client-secret}', 'k');
    const err = thrownDocex(() => loadConfig(file, { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_CREDENTIAL');
    expect(err.message).toBe(
      'service.clientSecret: credential client-secret asked for, but CREDENTIALS_DIRECTORY is not set (systemd sets it for LoadCredential=client-secret:/path/to/file; in a container or by hand, set it to the folder holding client-secret)',
    );
  });

  it('refuses a missing credential with the config path, the name and the fix', () => {
    const file = configFile('s', '${credential:api-key}');
    const err = thrownDocex(() => loadConfig(file, { env: { CREDENTIALS_DIRECTORY: credentials } }));
    expect(err.code).toBe('DOCEX_CONFIG_CREDENTIAL');
    expect(err.message).toContain('service.apiKey: credential api-key not found in');
    expect(err.message).toContain('LoadCredential=api-key:');
  });

  it('refuses names that are not a file name (no path escapes)', () => {
    for (const name of ['../api-key', 'a/b', '..', '']) {
      const file = configFile(`\${credential:${name}}`, 'k');
      const err = thrownDocex(() => loadConfig(file, { env: { CREDENTIALS_DIRECTORY: credentials } }));
      expect(err.code, name).toBe('DOCEX_CONFIG_CREDENTIAL');
    }
  });

  it('applies the secret-file permission rule to credentials too', () => {
    credential('api-key', 'readable-by-all', 0o444);
    const file = configFile('s', '${credential:api-key}');
    const err = thrownDocex(() => loadConfig(file, { env: { CREDENTIALS_DIRECTORY: credentials } }));
    expect(err.code).toBe('DOCEX_CONFIG_SECRET_PERMISSIONS');
    expect(JSON.stringify(err.toJSON())).not.toContain('readable-by-all');
  });
});

describe('commands that do not call the service (secretsOnlyUnder)', () => {
  /** The guide's service block (systemd/README.md, step 5), and a journal whose password is `password`. */
  function guideConfig(password?: string): string {
    const file = path.join(dir, 'guide.yaml');
    writeFileSync(
      file,
      `${guideServiceBlock()}${password === undefined ? '' : `journal: { url: "postgres://docex@db.example.test/docex", password: "${password}" }\n`}`,
      { mode: 0o600 },
    );
    return file;
  }

  it('load without CREDENTIALS_DIRECTORY: the service credentials are left unread (placeholders), the rest is read', () => {
    const { config, warnings } = loadConfig(guideConfig(), {
      env: {},
      secretsOnlyUnder: ['journal'],
    });
    expect(config.service?.clientSecret).toBe('<unread credential:client-secret>');
    expect(config.service?.apiKey).toBe('<unread credential:api-key>');
    for (const file of ['ca.pem', 'client.pem', 'client.key'])
      expect(Object.values(config.service?.tls ?? {})).toContain(
        path.join(dir, '<unread env:CREDENTIALS_DIRECTORY>', file),
      );
    expect(config.stateDir).toBe(path.join(dir, 'state'));
    expect(warnings).toEqual([]);
  });

  it('read no credential outside the paths they use, even where CREDENTIALS_DIRECTORY has them', () => {
    credential('client-secret', 'secret-from-systemd');
    credential('api-key', 'key-from-systemd');
    const { config } = loadConfig(guideConfig(), {
      env: { CREDENTIALS_DIRECTORY: credentials },
      secretsOnlyUnder: ['journal'],
    });
    expect(JSON.stringify(config)).not.toMatch(/secret-from-systemd|key-from-systemd/);
    // Set, the credentials folder is a path like any other.
    expect(config.service?.tls.caFile).toBe(path.join(credentials, 'ca.pem'));
  });

  it('still read the credentials of the paths they use: a journal password asked for without CREDENTIALS_DIRECTORY fails, naming it', () => {
    const err = thrownDocex(() =>
      loadConfig(guideConfig('${credential:docex-db-password}'), { env: {}, secretsOnlyUnder: ['journal'] }),
    );
    expect(err.code).toBe('DOCEX_CONFIG_CREDENTIAL');
    expect(err.message).toMatch(/^journal\.password: credential docex-db-password asked for/);
    credential('docex-db-password', 'db-secret');
    const { config } = loadConfig(guideConfig('${credential:docex-db-password}'), {
      env: { CREDENTIALS_DIRECTORY: credentials },
      secretsOnlyUnder: ['journal'],
    });
    expect(config.journal.password).toBe('db-secret');
  });

  it('the service commands (no secretsOnlyUnder) read every credential, as before', () => {
    const err = thrownDocex(() => loadConfig(guideConfig(), { env: {} }));
    expect(err.code).toBe('DOCEX_CONFIG_CREDENTIAL');
  });
});
