/**
 * Host key pinning, pure: the server's key blob against SHA-256 fingerprints and/or known_hosts
 * text. Never trust on first use: no entry for the host is a refusal, like a changed key.
 */
import { createHash, createHmac } from 'node:crypto';

export type HostKeyVerdict =
  | { ok: true; fingerprint: string }
  | { ok: false; reason: 'changed' | 'unknown' | 'revoked'; fingerprint: string };

/** `SHA256:base64` without padding, as `ssh-keygen -l` prints it. */
export function keyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** How known_hosts names a host: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function wildcardMatch(pattern: string, name: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern.toLowerCase() === name.toLowerCase();
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i').test(name);
}

function hashedMatch(entry: string, name: string): boolean {
  const [, magic, salt, hash] = entry.split('|');
  if (magic !== '1' || !salt || !hash) return false;
  return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
}

/** Does a comma-separated host pattern list name this host? A negated match (`!pattern`) wins. */
export function hostPatternsMatch(patterns: string, name: string): boolean {
  let matched = false;
  for (const pattern of patterns.split(',')) {
    if (pattern.startsWith('|')) {
      if (hashedMatch(pattern, name)) matched = true;
    } else if (pattern.startsWith('!')) {
      if (wildcardMatch(pattern.slice(1), name)) return false;
    } else if (wildcardMatch(pattern, name)) matched = true;
  }
  return matched;
}

interface KnownHostsLine {
  marker: string | undefined;
  patterns: string;
  key: Buffer;
}

function parseKnownHosts(text: string): KnownHostsLine[] {
  const lines: KnownHostsLine[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const fields = line.split(/\s+/);
    const marker = fields[0]?.startsWith('@') ? fields.shift() : undefined;
    const [patterns, , keyBase64] = fields;
    if (!patterns || !keyBase64) continue;
    lines.push({ marker, patterns, key: Buffer.from(keyBase64, 'base64') });
  }
  return lines;
}

/** The verdict of known_hosts text for this host and key. */
export function checkKnownHosts(text: string, host: string, port: number, keyBlob: Buffer): HostKeyVerdict {
  const fingerprint = keyFingerprint(keyBlob);
  const name = knownHostsName(host, port);
  let seen = false;
  let matched = false;
  for (const entry of parseKnownHosts(text)) {
    if (entry.marker === '@cert-authority' || !hostPatternsMatch(entry.patterns, name)) continue;
    const same = entry.key.equals(keyBlob);
    if (entry.marker === '@revoked') {
      if (same) return { ok: false, reason: 'revoked', fingerprint };
      continue;
    }
    seen = true;
    if (same) matched = true;
  }
  if (matched) return { ok: true, fingerprint };
  return { ok: false, reason: seen ? 'changed' : 'unknown', fingerprint };
}

export interface HostKeyCheckInput {
  sha256?: readonly string[] | undefined;
  /** Contents of the known_hosts file, already read. */
  knownHostsText?: string | undefined;
  host: string;
  port: number;
}

/** Pinned fingerprints first, then known_hosts; either accepting the key is enough. */
export function checkHostKey(input: HostKeyCheckInput, keyBlob: Buffer): HostKeyVerdict {
  const fingerprint = keyFingerprint(keyBlob);
  const pins = (input.sha256 ?? []).map((pin) => pin.replace(/=+$/, ''));
  if (pins.includes(fingerprint)) return { ok: true, fingerprint };
  if (input.knownHostsText !== undefined) {
    const verdict = checkKnownHosts(input.knownHostsText, input.host, input.port, keyBlob);
    if (verdict.ok || verdict.reason === 'revoked' || pins.length === 0) return verdict;
  }
  return { ok: false, reason: pins.length > 0 ? 'changed' : 'unknown', fingerprint };
}

/** The key type a known_hosts key blob names (its first SSH string), e.g. `ssh-ed25519`. */
export function keyTypeOfBlob(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined;
  const len = blob.readUInt32BE(0);
  if (len === 0 || len > 64 || blob.length < 4 + len) return undefined;
  return blob.subarray(4, 4 + len).toString('latin1');
}

/** Host key algorithms a key type can be presented with (an RSA key signs with SHA-2 or SHA-1). */
const ALGORITHMS_OF_TYPE: Record<string, readonly string[]> = {
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

/**
 * The host key algorithms to offer so that the server presents a key known_hosts lists: without
 * it, a server holding several keys may present one known_hosts does not list (ssh2 prefers
 * ed25519) and be refused as "changed". Empty: no line for this host (nothing to restrict).
 */
export function knownHostKeyAlgorithms(text: string, host: string, port: number): string[] {
  const name = knownHostsName(host, port);
  const algorithms: string[] = [];
  for (const entry of parseKnownHosts(text)) {
    if (entry.marker !== undefined || !hostPatternsMatch(entry.patterns, name)) continue;
    const type = keyTypeOfBlob(entry.key);
    if (type === undefined) continue;
    for (const algorithm of ALGORITHMS_OF_TYPE[type] ?? [type]) {
      if (!algorithms.includes(algorithm)) algorithms.push(algorithm);
    }
  }
  return algorithms;
}
