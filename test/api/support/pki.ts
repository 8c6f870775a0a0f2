import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface Issued {
  certPem: string;
  keyPem: string;
}

export interface TestPki {
  caCertPem: string;
  server: Issued;
  client: Issued;
  /** A client certificate from another CA: the server must refuse it. */
  rogueClient: Issued;
}

function keyPair(): { pem: string; forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey } {
  // node:crypto generates RSA keys far faster than forge's pure JS.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(pem) as forge.pki.rsa.PrivateKey;
  return { pem, forgeKey, publicKey: forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e) };
}

function certificate(options: {
  cn: string;
  publicKey: forge.pki.rsa.PublicKey;
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey };
  selfKey?: forge.pki.rsa.PrivateKey;
  extensions: object[];
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = options.publicKey;
  cert.serialNumber = `01${randomBytes(8).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: options.cn }]);
  cert.setIssuer(
    options.issuer ? options.issuer.cert.subject.attributes : [{ name: 'commonName', value: options.cn }],
  );
  cert.setExtensions(options.extensions);
  cert.sign((options.issuer?.key ?? options.selfKey)!, forge.md.sha256.create());
  return cert;
}

function makeCa(cn: string) {
  const keys = keyPair();
  const cert = certificate({
    cn,
    publicKey: keys.publicKey,
    selfKey: keys.forgeKey,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert, key: keys.forgeKey };
}

function issue(ca: ReturnType<typeof makeCa>, cn: string, kind: 'server' | 'client'): Issued {
  const keys = keyPair();
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: kind === 'server', clientAuth: kind === 'client' },
  ];
  if (kind === 'server') {
    extensions.push({
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    });
  }
  const cert = certificate({ cn, publicKey: keys.publicKey, issuer: ca, extensions });
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.pem };
}

/** A throwaway CA with a server certificate for 127.0.0.1 and client certificates. */
export function makeTestPki(): TestPki {
  const ca = makeCa('docex test CA');
  const rogue = makeCa('rogue CA');
  return {
    caCertPem: forge.pki.certificateToPem(ca.cert),
    server: issue(ca, '127.0.0.1', 'server'),
    client: issue(ca, 'docex-test-client', 'client'),
    rogueClient: issue(rogue, 'rogue-client', 'client'),
  };
}
