import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { certificateSerial, ensurePki } from '../../src/sandbox/pki.js';

describe('sandbox PKI', () => {
  it.each([
    ['all-zero', Buffer.alloc(16, 0x00)],
    ['all-ones', Buffer.alloc(16, 0xff)],
  ])(
    'makes a minimal positive DER serial from %s random bytes (no "illegal padding" in OpenSSL)',
    (_name, random) => {
      const first = Number.parseInt(certificateSerial(random).slice(0, 2), 16);
      expect(certificateSerial(random)).toHaveLength(32);
      expect(first).toBeGreaterThan(0);
      expect(first).toBeLessThan(0x80);
    },
  );

  it('issues server and client certificates signed by its CA, the server one for 127.0.0.1', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-pki-'));
    try {
      const pki = ensurePki(dir);
      const ca = new X509Certificate(pki.caCertPem);
      const server = new X509Certificate(pki.serverCertPem);
      const client = new X509Certificate(pki.clientCertPem);
      expect(server.checkIssued(ca)).toBe(true);
      expect(client.checkIssued(ca)).toBe(true);
      expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
      expect(ensurePki(dir).clientCertPem).toBe(pki.clientCertPem);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
