/**
 * The secrets the webhook receiver accepts, read from the state folder: a new secret is seen even
 * when the folder's mtime does not move, a replaced one only bridges a day, and a signature that
 * matched nothing reads the folder again at most once a second.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import {
  PREVIOUS_SECRET_TTL_MS,
  SecretRing,
  storeWebhookSecret,
  webhookSecretsDir,
} from '../../src/returns/webhook-secrets.js';

let stateDir: string;
beforeEach(() => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'docex-webhook-secrets-'));
});
afterEach(() => {
  rmSync(stateDir, { recursive: true, force: true });
});

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const at = new Date('2026-11-21T10:00:00Z');
/** What each signer makes of one message: tells which secrets a ring holds. */
const signatures = (signers: Webhook[]) => signers.map((s) => s.sign('msg_1', at, '{}'));
const signatureOf = (secret: string) => new Webhook(secret).sign('msg_1', at, '{}');

describe('webhook secret ring', () => {
  it('sees a secret stored within the same folder mtime tick as the one before', () => {
    const first = newSecret();
    storeWebhookSecret(stateDir, 'sub_1', first);
    const dir = webhookSecretsDir(stateDir);
    const ring = new SecretRing(dir, [], silentLogger());
    expect(signatures(ring.current())).toEqual([signatureOf(first)]);

    const { atime, mtime } = statSync(dir);
    const second = newSecret();
    storeWebhookSecret(stateDir, 'sub_2', second);
    // A coarse file system (or a fast create + rename) leaves the folder mtime where it was.
    utimesSync(dir, atime, mtime);
    expect(signatures(ring.current()).sort()).toEqual([signatureOf(first), signatureOf(second)].sort());
  });

  it('accepts a replaced secret for a day after the reset, then only the new one', () => {
    const old = newSecret();
    const fresh = newSecret();
    storeWebhookSecret(stateDir, 'sub_1', old);
    storeWebhookSecret(stateDir, 'sub_1', fresh);
    let now = Date.now();
    const ring = new SecretRing(webhookSecretsDir(stateDir), [], silentLogger(), () => now);
    expect(signatures(ring.current()).sort()).toEqual([signatureOf(old), signatureOf(fresh)].sort());

    now += PREVIOUS_SECRET_TTL_MS + 1000;
    expect(signatures(ring.current())).toEqual([signatureOf(fresh)]);
    // Read afresh (a restart a day later): the old one is not taken back.
    const later = new SecretRing(webhookSecretsDir(stateDir), [], silentLogger(), () => now);
    expect(signatures(later.current())).toEqual([signatureOf(fresh)]);
  });

  it('reads the folder again after a signature mismatch at most once a second', () => {
    storeWebhookSecret(stateDir, 'sub_1', newSecret());
    let now = 1_000_000;
    const ring = new SecretRing(webhookSecretsDir(stateDir), [], silentLogger(), () => now);
    ring.current();
    expect(ring.reloadAfterMismatch()).toHaveLength(1);
    now += 999;
    expect(ring.reloadAfterMismatch()).toBeUndefined();
    now += 1;
    expect(ring.reloadAfterMismatch()).toHaveLength(1);
  });
});
