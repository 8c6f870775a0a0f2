import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readTlsMaterial } from '../../src/config/tls-files.js';
import { DocexError } from '../../src/core/errors.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-tls-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function tlsFiles(keyMode: number) {
  const files = { caFile: 'ca.pem', certFile: 'client.pem', keyFile: 'client.key' };
  const out = Object.fromEntries(
    Object.entries(files).map(([k, name]) => [k, path.join(dir, name)]),
  ) as typeof files;
  writeFileSync(out.caFile, 'CA PEM', { mode: 0o644 });
  writeFileSync(out.certFile, 'CERT PEM', { mode: 0o644 });
  writeFileSync(out.keyFile, '-----BEGIN PRIVATE KEY-----\nkey-body\n');
  chmodSync(out.keyFile, keyMode);
  return out;
}

describe('readTlsMaterial', () => {
  it('refuses a private key readable by group or others, saying which file and how to fix it', () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const files = tlsFiles(mode);
      let err: unknown;
      try {
        readTlsMaterial(files);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DocexError);
      const e = err as DocexError;
      expect(e.code).toBe('DOCEX_CONFIG_SECRET_PERMISSIONS');
      expect(e.message).toBe(
        `service.tls.keyFile: secret file ${files.keyFile} is readable by group or others (mode 0${mode.toString(8)}); run chmod 600 ${files.keyFile}`,
      );
      expect(JSON.stringify(e.toJSON())).not.toContain('key-body');
    }
  });

  it('reads a 0600 or 0400 key, and a world-readable CA and certificate', () => {
    for (const mode of [0o600, 0o400]) {
      const material = readTlsMaterial(tlsFiles(mode));
      expect(material).toEqual({
        ca: 'CA PEM',
        cert: 'CERT PEM',
        key: '-----BEGIN PRIVATE KEY-----\nkey-body',
      });
    }
  });
});
