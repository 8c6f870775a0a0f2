import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import { writeSecretFile } from './atomic-file.js';

/**
 * The sandbox's own small PKI: a CA, a server certificate for 127.0.0.1/localhost and a client
 * certificate the agent uses for mutual TLS. Created once per state folder and reused after, so a
 * restarted sandbox keeps trusting the agent's certificate.
 */
export interface SandboxPki {
  caCertPem: string;
  caKeyPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  paths: {
    caCert: string;
    caKey: string;
    serverCert: string;
    serverKey: string;
    clientCert: string;
    clientKey: string;
  };
}

const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

function rsaKeyPem(): string {
  // node:crypto is much faster than forge's pure-JS key generation.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * A 16-byte positive serial whose first byte is 0x01-0x7f. forge writes the hex as given, so a
 * leading zero byte would be a non-minimal DER INTEGER, which OpenSSL refuses ("illegal padding").
 */
export function certificateSerial(random: Buffer = randomBytes(16)): string {
  const bytes = Buffer.from(random.subarray(0, 16));
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

interface IssueInput {
  commonName: string;
  keyPem: string;
  issuer?: { certPem: string; keyPem: string };
  extensions: object[];
  now: number;
}

function issue(input: IssueInput): string {
  const key = forge.pki.privateKeyFromPem(input.keyPem) as forge.pki.rsa.PrivateKey;
  const publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = certificateSerial();
  cert.validity.notBefore = new Date(input.now - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(input.now + TEN_YEARS_MS);
  cert.setSubject([
    { name: 'commonName', value: input.commonName },
    { name: 'organizationName', value: 'docex sandbox' },
  ]);
  const issuerCert = input.issuer ? forge.pki.certificateFromPem(input.issuer.certPem) : undefined;
  cert.setIssuer(issuerCert ? issuerCert.subject.attributes : cert.subject.attributes);
  cert.setExtensions([...input.extensions, { name: 'subjectKeyIdentifier' }]);
  const signingKey = input.issuer ? forge.pki.privateKeyFromPem(input.issuer.keyPem) : key;
  cert.sign(signingKey as forge.pki.rsa.PrivateKey, forge.md.sha256.create());
  return forge.pki.certificateToPem(cert);
}

/** Loads the PKI of `dir`, creating what is missing on first start. */
export function ensurePki(dir: string, now: number = Date.now()): SandboxPki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const paths = {
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    serverCert: path.join(dir, 'server.crt'),
    serverKey: path.join(dir, 'server.key'),
    clientCert: path.join(dir, 'client.crt'),
    clientKey: path.join(dir, 'client.key'),
  };
  if (!Object.values(paths).every((p) => existsSync(p))) {
    const caKeyPem = rsaKeyPem();
    const caCertPem = issue({
      commonName: 'docex sandbox CA',
      keyPem: caKeyPem,
      now,
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
      ],
    });
    const issuer = { certPem: caCertPem, keyPem: caKeyPem };
    const serverKeyPem = rsaKeyPem();
    const serverCertPem = issue({
      commonName: 'localhost',
      keyPem: serverKeyPem,
      issuer,
      now,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    });
    const clientKeyPem = rsaKeyPem();
    const clientCertPem = issue({
      commonName: 'docex-agent sandbox client',
      keyPem: clientKeyPem,
      issuer,
      now,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', clientAuth: true },
      ],
    });
    writeSecretFile(paths.caKey, caKeyPem);
    writeSecretFile(paths.serverKey, serverKeyPem);
    writeSecretFile(paths.clientKey, clientKeyPem);
    writeFileSync(paths.caCert, caCertPem);
    writeFileSync(paths.serverCert, serverCertPem);
    writeFileSync(paths.clientCert, clientCertPem);
  }
  const read = (p: string) => readFileSync(p, 'utf8');
  return {
    caCertPem: read(paths.caCert),
    caKeyPem: read(paths.caKey),
    serverCertPem: read(paths.serverCert),
    serverKeyPem: read(paths.serverKey),
    clientCertPem: read(paths.clientCert),
    clientKeyPem: read(paths.clientKey),
    paths,
  };
}
