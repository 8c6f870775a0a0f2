/**
 * `docex-agent credentials init|check`, loaded when they run.
 * init: the service's credential set-up (a 2048-bit RSA key kept secret, a PEM certificate
 * signing request to paste in the partner portal). check: the configured TLS files against each
 * other, the CA and the calendar.
 */
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import forge from 'node-forge';
import { loadConfig, readTlsMaterial } from '../config/index.js';
import { DocexError, isDocexError } from '../core/errors.js';
import { type CheckLine, failed, formatCheck, plainOutput } from './check-line.js';
import { inspectTlsMaterial, type TlsMaterialText } from './credentials-inspect.js';
import { READ_ONLY_SECRETS } from './read-only.js';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

/**
 * The one credentials layout: a folder holding these files, the same names everywhere. Under
 * systemd it is the root-only source of LoadCredential= (systemd hands the service a private copy
 * in $CREDENTIALS_DIRECTORY); in a container, a copy owned by the image's user mounted where
 * CREDENTIALS_DIRECTORY points. The configuration names them as CREDENTIAL_CONFIG shows.
 */
export const KEY_FILE = 'client.key';
export const CSR_FILE = 'client.csr';
export const CERT_FILE = 'client.pem';
export const CA_FILE = 'ca.pem';
export const CLIENT_SECRET = 'client-secret';
export const API_KEY = 'api-key';

/** The service block's references to the credentials folder (systemd/README.md step 5, the container docs). */
export const CREDENTIAL_CONFIG = `service:
  clientId: <client_id>
  clientSecret: \${credential:${CLIENT_SECRET}}
  apiKey: \${credential:${API_KEY}}
  tls:
    caFile: \${env:CREDENTIALS_DIRECTORY}/${CA_FILE}
    certFile: \${env:CREDENTIALS_DIRECTORY}/${CERT_FILE}
    keyFile: \${env:CREDENTIALS_DIRECTORY}/${KEY_FILE}`;

export interface InitOptions {
  cn: string;
  out: string;
  org?: string;
  country?: string;
}

export interface InitResult {
  keyFile: string;
  csrFile: string;
  csrPem: string;
}

/** Writes a new file only: never replaces a key (a lost key cannot be recovered). */
function writeNew(file: string, text: string, mode: number): void {
  const fd = openSync(file, 'wx', mode);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** A 2048-bit RSA key (PKCS#8 PEM, mode 0600) and a SHA-256 PEM CSR with subject CN=cn. */
export function createCredentials(options: InitOptions): InitResult {
  const cn = options.cn.trim();
  if (cn === '' || cn.length > 64) {
    throw new DocexError('DOCEX_CREDENTIALS', 'the common name (--cn) must be 1 to 64 characters');
  }
  const out = path.resolve(options.out);
  const keyFile = path.join(out, KEY_FILE);
  const csrFile = path.join(out, CSR_FILE);
  for (const file of [keyFile, csrFile]) {
    if (existsSync(file)) {
      throw new DocexError(
        'DOCEX_CREDENTIALS',
        `${file} exists; refusing to overwrite it (move it away or choose another --out)`,
        { details: { file } },
      );
    }
  }
  mkdirSync(out, { recursive: true, mode: 0o700 });
  // node:crypto makes the key (OpenSSL, fast); node-forge builds and signs the request.
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const key = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  const csr = forge.pki.createCertificationRequest();
  csr.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  const subject: forge.pki.CertificateField[] = [{ name: 'commonName', value: cn }];
  if (options.org) subject.push({ name: 'organizationName', value: options.org });
  if (options.country) subject.push({ name: 'countryName', value: options.country });
  csr.setSubject(subject);
  csr.sign(key, forge.md.sha256.create());
  const csrPem = forge.pki.certificationRequestToPem(csr);
  writeNew(keyFile, privateKey, 0o600);
  writeNew(csrFile, csrPem, 0o644);
  return { keyFile, csrFile, csrPem };
}

/** What to do next, in the order of the service's set-up steps. */
export function initInstructions(result: InitResult, cn: string): string {
  const dir = path.dirname(result.keyFile);
  const file = (name: string) => path.join(dir, name);
  const config = CREDENTIAL_CONFIG.split('\n')
    .map((line) => `       ${line}`)
    .join('\n');
  return `Created
  ${result.keyFile}   2048-bit RSA private key, mode 0600: keep it secret, never send it anywhere
  ${result.csrFile}   certificate signing request, CN=${cn}

Next
  1. Partner portal > Services > Integration Pack card > Connect API tab: paste the whole request
     below (BEGIN to END lines included) into the certificate request field and submit it.
  2. Download the signed client certificate (PEM) and save it as ${file(CERT_FILE)}
     and the environment's CA certificate as ${file(CA_FILE)}
  3. The same screen shows the API key, client_id and client_secret. Save the two secrets in this
     folder too, mode 0600, without a trailing newline:
       ${file(CLIENT_SECRET)}   ${file(API_KEY)}
     The configuration names every file of this folder by its name; systemd hands the folder's files
     over with LoadCredential= and sets CREDENTIALS_DIRECTORY (systemd/README.md), a container gets a
     copy mounted where CREDENTIALS_DIRECTORY points (docs/operations.md):
${config}
  4. docex-agent credentials check --cert ${file(CERT_FILE)} --key ${result.keyFile} --ca ${file(CA_FILE)}
     then docex-agent check --config <file> (systemd/README.md, step 6)

${result.csrPem}`;
}

export interface CheckOptions {
  config?: string;
  cert?: string;
  key?: string;
  ca?: string;
}

/** The material named by the options (`--cert/--key/--ca` win over the configuration's). */
function materialFiles(opts: CheckOptions): { ca: string; cert: string; key: string } {
  const allGiven = opts.cert && opts.key && opts.ca;
  const configFile = opts.config ?? (allGiven ? undefined : DEFAULT_CONFIG_FILE);
  // Only the TLS files are read: the service's other secrets are not needed here.
  const tls = configFile
    ? loadConfig(configFile, { secretsOnlyUnder: READ_ONLY_SECRETS['credentials check'] }).config.service?.tls
    : undefined;
  const files = {
    ca: opts.ca ?? tls?.caFile,
    cert: opts.cert ?? tls?.certFile,
    key: opts.key ?? tls?.keyFile,
  };
  if (!files.ca || !files.cert || !files.key) {
    throw new DocexError(
      'DOCEX_CREDENTIALS',
      'no TLS files to check: give --config with a service.tls block, or --cert, --key and --ca',
    );
  }
  return files as { ca: string; cert: string; key: string };
}

/** Every line of `credentials check`. File problems (missing, key readable by others) fail first. */
export function credentialsCheckLines(opts: CheckOptions, now = new Date()): CheckLine[] {
  let material: TlsMaterialText;
  let what = 'config';
  try {
    const files = materialFiles(opts);
    what = 'tls files';
    material = readTlsMaterial({ caFile: files.ca, certFile: files.cert, keyFile: files.key });
  } catch (err) {
    if (!isDocexError(err)) throw err;
    const hint = what === 'config' ? 'give --config <file>, or --cert, --key and --ca' : 'fix the file named';
    return [{ ok: false, what, detail: `${err.code}: ${err.message}`, hint }];
  }
  return [
    { ok: true, what: 'tls files', detail: 'readable, the key by its owner only' },
    ...inspectTlsMaterial(material, now),
  ];
}

export async function credentialsInitCommand(opts: InitOptions): Promise<void> {
  try {
    const result = createCredentials(opts);
    process.stdout.write(initInstructions(result, opts.cn.trim()));
  } catch (err) {
    if (!isDocexError(err)) throw err;
    process.stderr.write(`${err.code}: ${err.message}\n`);
    process.exitCode = 1;
  }
}

export async function credentialsCheckCommand(opts: CheckOptions): Promise<void> {
  const lines = credentialsCheckLines(opts);
  const plain = plainOutput();
  for (const line of lines) process.stdout.write(formatCheck(line, { plain }));
  process.exitCode = failed(lines) ? 1 : 0;
}
