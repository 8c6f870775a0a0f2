import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactDeep, SECRET_LOG_KEYS } from '../../src/core/log-redact.js';
import { createLogger, REDACT_PATHS, wantsPretty } from '../../src/core/logger.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';

/** Distinct values, so a leak names the path it came from. */
const leak = (name: string) => `leak-${name}-0123456789`;

/** A configuration as the agent holds it after substitution, with a secret at every secret place. */
function configWithSecrets() {
  return {
    service: {
      apiUrl: 'https://api.example.com/v1',
      clientId: 'client-1',
      clientSecret: leak('service.clientSecret'),
      apiKey: leak('service.apiKey'),
      tls: { caFile: '/etc/ca.pem', certFile: '/etc/c.pem', keyFile: '/etc/c.key' },
      admin: { clientId: 'admin-1', clientSecret: leak('admin.clientSecret'), apiKey: leak('admin.apiKey') },
    },
    folders: [
      { name: 'local', source: { type: 'local', path: '/in/local' } },
      {
        name: 'remote',
        source: {
          type: 'sftp',
          host: 'sftp.example.com',
          username: 'erp',
          password: leak('sftp.password'),
          privateKeyFile: '/etc/id',
          passphrase: leak('sftp.passphrase'),
        },
        outputs: [{ target: { type: 'sftp', password: leak('output.password') } }],
      },
    ],
    webhooks: { enabled: true, secrets: [leak('webhook.secret.0'), leak('webhook.secret.1')] },
  };
}

describe('log redaction', () => {
  it('covers every fast-redact path', () => {
    for (const p of REDACT_PATHS) {
      const key = p.replace(/^\["|"\]$|\.\*$/g, '').toLowerCase();
      expect(SECRET_LOG_KEYS.has(key), p).toBe(true);
    }
  });

  it('never writes a configuration secret, however deep, and keeps everything else', () => {
    const { log, raw } = captureLogger('trace');
    const config = configWithSecrets();
    log.info({ config }, 'configuration');
    log.debug({ folder: config.folders[1] }, 'folder');
    log.trace({ a: { b: { c: { d: { e: { f: { password: leak('deep.password') } } } } } } }, 'deep');
    const text = raw();
    expect(text.match(/leak-[a-z.0-9]+-0123456789/g) ?? []).toEqual([]);
    expect(text).toContain('sftp.example.com');
    expect(text).toContain('"username":"erp"');
    expect(text).toContain('/in/local');
    expect(text).toContain(`"secrets":"${REDACTED}"`);
    // The caller's object is left as it was.
    expect(config.service.clientSecret).toBe(leak('service.clientSecret'));
  });

  it('never writes headers, tokens or pre-signed URLs, in objects, arrays and error fields', () => {
    const { log, raw } = captureLogger('trace');
    const err = Object.assign(new Error('answered 500'), {
      code: 'DOCEX_SERVER',
      status: 500,
      headers: { authorization: `Bearer ${leak('bearer')}`, 'X-Api-Key': leak('header.apiKey') },
    });
    const wrapped = new Error('upload failed', {
      cause: Object.assign(new Error('inner'), { fileUploadUrl: leak('cause.url') }),
    });
    log.error({ err, folder: 'f' }, 'call failed');
    log.warn({ err: wrapped }, 'wrapped');
    log.info(
      {
        answer: { access_token: leak('access_token'), token_type: 'Bearer', expires_in: 3600 },
        attempts: [{ url: leak('attempt.url') }, { uploadUrl: leak('attempt.uploadUrl') }],
        request: { headers: { 'webhook-signature': leak('webhook.signature'), cookie: leak('cookie') } },
        token: leak('token'),
        url: leak('url'),
        key: leak('key'),
        credentials: { clientId: leak('credentials.clientId') },
      },
      'probe',
    );
    const text = raw();
    expect(text.match(/leak-[a-zA-Z_.0-9]+-0123456789/g) ?? []).toEqual([]);
    // What explains the failure stays.
    expect(text).toContain('answered 500');
    expect(text).toContain('DOCEX_SERVER');
    expect(text).toContain('upload failed');
    expect(text).toContain('"expires_in":3600');
  });

  it('returns the same object when nothing is secret (no copy on the common path)', () => {
    const fields = { folder: 'f', file: 'a.pdf', nested: { size: 3, list: [1, 2] } };
    expect(redactDeep(fields)).toBe(fields);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic['self'] = cyclic;
    expect(redactDeep(cyclic)).toBe(cyclic);
  });
});

describe('log format', () => {
  it('is pretty on a terminal and JSON otherwise, unless set', () => {
    expect(wantsPretty({}, true)).toBe(true);
    expect(wantsPretty({}, false)).toBe(false);
    expect(wantsPretty({ format: 'json' }, true)).toBe(false);
    expect(wantsPretty({ format: 'pretty' }, false)).toBe(true);
    // A test or tool passing its own destination gets JSON it can parse.
    expect(wantsPretty({ destination: new Writable() }, true)).toBe(false);
  });

  it('writes pretty text through pino-pretty, redacted as the JSON lines are', async () => {
    let out = '';
    const destination = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    const log = createLogger({ format: 'pretty', destination, level: 'info' });
    log.info({ folder: 'invoices', service: { clientSecret: leak('pretty') } }, 'agent started');
    // pino-pretty is a stream of its own: wait for the line, not for a while.
    await waitFor(() => out.includes('agent started') && out.includes('invoices'));
    expect(out).toContain('agent started');
    expect(out).toContain('invoices');
    expect(out).not.toContain(leak('pretty'));
    expect(() => JSON.parse(out.split('\n')[0]!)).toThrow();
  });
});
