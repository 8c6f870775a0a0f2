/**
 * What `credentials check` and `check` say about the mutual-TLS material: the key matches the
 * certificate, the certificate chains to the configured CA, its validity and days left, the key
 * size the service asks for (2048-bit RSA). Pure: PEM text and the time in, check lines out.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { CheckLine } from './check-line.js';

/** PEM text (or its bytes), as readTlsMaterial and the sandbox give it. */
export interface TlsMaterialText {
  ca: string | Buffer;
  cert: string | Buffer;
  key: string | Buffer;
}

const DAY_MS = 86_400_000;
/** Fewer days left than this: a warning (time to request a new certificate). */
export const EXPIRY_WARN_DAYS = 30;

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle. */
export function parseCertificates(pem: string | Buffer): X509Certificate[] {
  return (String(pem).match(PEM_CERT) ?? []).map((block) => new X509Certificate(block));
}

const subjectCn = (cert: X509Certificate) => /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? cert.subject;

/** The chain from `leaf` to a certificate of `anchors`, through `intermediates`; undefined when none. */
function chainTo(
  leaf: X509Certificate,
  anchors: readonly X509Certificate[],
  intermediates: readonly X509Certificate[],
): X509Certificate[] | undefined {
  const chain = [leaf];
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    const signedBy = (c: X509Certificate) => current.checkIssued(c) && current.verify(c.publicKey);
    const anchor = anchors.find(signedBy);
    if (anchor) return [...chain, anchor];
    const next = intermediates.find((c) => c !== current && signedBy(c));
    if (!next) return undefined;
    chain.push(next);
    current = next;
  }
  return undefined;
}

/** Days from `now` to the end of the certificate's validity (negative once expired). */
export function daysLeft(cert: X509Certificate, now: Date): number {
  return Math.floor((new Date(cert.validTo).getTime() - now.getTime()) / DAY_MS);
}

function keyLine(key: KeyObject): CheckLine {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  const type = key.asymmetricKeyType ?? 'unknown';
  const fits = type === 'rsa' && bits === 2048;
  return {
    ok: true,
    warn: !fits,
    what: 'private key',
    detail: `${type.toUpperCase()}${bits ? ` ${bits}-bit` : ''}${fits ? '' : ' (the service asks for 2048-bit RSA)'}`,
    hint: 'create a 2048-bit RSA key and request: docex-agent credentials init --cn NAME --out DIR',
  };
}

/** The certificate checks, in the order a reader fixes them. `now` decides expiry. */
export function inspectTlsMaterial(material: TlsMaterialText, now: Date): CheckLine[] {
  const lines: CheckLine[] = [];
  let key: KeyObject;
  try {
    key = createPrivateKey(material.key);
  } catch (err) {
    return [
      {
        ok: false,
        what: 'private key',
        detail: `not a PEM private key (${(err as { code?: string }).code ?? 'unreadable'})`,
        hint: 'keyFile must be the PEM private key the certificate request was made with',
      },
    ];
  }
  lines.push(keyLine(key));

  const certs = parseCertificates(material.cert);
  const leaf = certs[0];
  if (!leaf) {
    lines.push({
      ok: false,
      what: 'certificate',
      detail: 'certFile holds no PEM certificate',
      hint: 'save the signed certificate the portal gives (PEM, -----BEGIN CERTIFICATE-----) as certFile',
    });
    return lines;
  }
  const matches = leaf.checkPrivateKey(key);
  lines.push({
    ok: matches,
    what: 'key and certificate',
    detail: matches
      ? `the key belongs to the certificate CN=${subjectCn(leaf)}`
      : `the key does not belong to the certificate CN=${subjectCn(leaf)} (public keys differ)`,
    hint: 'use the key the certificate request was made with, or request a new certificate for this key',
  });

  const anchors = parseCertificates(material.ca);
  const chain = anchors.length > 0 ? chainTo(leaf, anchors, certs.slice(1)) : undefined;
  lines.push({
    ok: true,
    warn: chain === undefined,
    what: 'certificate chain',
    detail: chain
      ? `signed by CN=${subjectCn(chain[chain.length - 1]!)} of the configured CA`
      : `not signed by ${anchors.length === 0 ? 'any certificate in caFile (none found)' : 'the CA in caFile'}; issuer ${leaf.issuer.replaceAll('\n', ', ')}`,
    hint: 'fine if the service signs client certificates with another CA than its server certificate; otherwise check certFile and caFile belong to the same environment (ACC or PRO)',
  });

  const left = daysLeft(leaf, now);
  const notYet = new Date(leaf.validFrom).getTime() > now.getTime();
  const expired = left < 0 || new Date(leaf.validTo).getTime() <= now.getTime();
  lines.push({
    ok: !expired && !notYet,
    warn: !expired && !notYet && left < EXPIRY_WARN_DAYS,
    what: 'certificate expiry',
    detail: expired
      ? `expired on ${new Date(leaf.validTo).toISOString()}`
      : notYet
        ? `not valid before ${new Date(leaf.validFrom).toISOString()}`
        : `${left} days left (until ${new Date(leaf.validTo).toISOString()})`,
    hint: 'request a new certificate in the portal (docex-agent credentials init makes the request) and replace certFile',
  });
  return lines;
}
