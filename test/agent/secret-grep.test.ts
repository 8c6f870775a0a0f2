/**
 * The whole agent as `docex-agent start` runs it (config file with `${file:}` secrets, mTLS files,
 * ops endpoints) against a real sandbox, logging at trace level: files submitted, a file rejected,
 * a failed upload retried, a token that expires and is fetched again, SFTP drop folders logging in
 * with a password and with a passphrase-protected key, a signed webhook delivery (whsec_ secret),
 * proofs and Peppol documents downloaded over pre-signed URLs. Then every secret value is looked
 * for in everything logged (agent and sandbox) and in the ops answers: none may appear.
 * A control line proves the search finds each value when it is there.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { stringify } from 'yaml';
import type { Agent } from '../../src/agent/agent.js';
import { DocexClient } from '../../src/api/index.js';
import { runStart, type StartedControl } from '../../src/cli/start-runner.js';
import { TOKEN_LIFETIME_SECONDS } from '../../src/sandbox/auth.js';
import type { JobRecord } from '../../src/sandbox/records.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { captureLogger } from '../api/support/log-capture.js';
import { sandboxClientOptions } from '../api/support/sandbox-client.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';
import { FAULT_PASSWORD, type FaultServer, startFaultServer } from '../sources/sftp/support/fault-server.js';
import { startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';
import { waitFor } from '../support/wait-for.js';

let dir: string;
let sandbox: TestSandbox;
let faultServer: FaultServer;
let sshd: TestSshd;
const capture = captureLogger('trace');
/** Every pre-signed URL the sandbox handed out (uploads, proofs, Peppol documents), by path. */
const issued: Array<{ path: string; signature: string }> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-grep-'));
  sandbox = await startTestSandbox({
    stateDir: path.join(dir, 'sandbox'),
    log: capture.log.child({ part: 'sandbox' }),
  });
  const signer = sandbox.sandbox.ctx.signer;
  const sign = signer.sign.bind(signer);
  // Records what the real signer issues; the URLs themselves are unchanged.
  signer.sign = (urlPath: string, expiresAt: number) => {
    const url = sign(urlPath, expiresAt);
    issued.push({ path: urlPath, signature: new URL(url).searchParams.get('signature')! });
    return url;
  };
  faultServer = await startFaultServer();
  sshd = await startSshd();
});

afterAll(async () => {
  await faultServer?.stop();
  await sshd?.stop();
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

function writeSecret(name: string, value: string): string {
  const file = path.join(dir, 'secrets', name);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${value}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return `\${file:./secrets/${name}}`;
}

/** The base64 body lines of a PEM private key (the header lines are no secret). */
function pemBodyLines(pem: string): string[] {
  return pem
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length >= 16 && !l.startsWith('-----'));
}

/** Writes under a dot-name, then renames into the served remote folder. */
function dropRemote(folder: string, name: string, content: Buffer): void {
  const temp = path.join(folder, `.${name}.uploading`);
  writeFileSync(temp, content);
  renameSync(temp, path.join(folder, name));
}

describe('secret grep over an end-to-end run', () => {
  it('finds no client secret, API key, private key line, access token, SFTP password or key passphrase, webhook secret or pre-signed URL signature in any log line or ops answer', async () => {
    const s = sandbox.sandbox;
    const c = s.credentials;
    const configFile = path.join(dir, 'agent.yaml');
    const inbox = path.join(dir, 'in', 'invoices');

    // A webhook subscription to the agent's receiver; its whsec_ secret goes in the config file. The
    // receiver listens on a port of its own choosing; the subscription learns it once the agent runs.
    const setup = new DocexClient(sandboxClientOptions(s));
    onTestFinished(() => setup.close());
    const subscription = await setup.webhooks.create({
      url: 'http://127.0.0.1:9/docex/webhooks',
      eventTypes: ['sending.event.status.changed', 'peppol.document.received'],
    });
    const webhookSecret = subscription.secret!;
    expect(webhookSecret).toMatch(/^whsec_/);

    // SFTP: one server takes a password, the other (OpenSSH) a key protected by a passphrase.
    const passwordRemote = mkdtempSync(path.join(dir, 'remote-password-'));
    const keyRemote = path.join(sshd.files, 'outbox');
    mkdirSync(keyRemote, { recursive: true });
    const passphrase = randomBytes(18).toString('base64url');
    execFileSync('/usr/bin/ssh-keygen', ['-q', '-p', '-P', '', '-N', passphrase, '-f', sshd.privateKeyPath]);
    const encryptedKey = readFileSync(sshd.privateKeyPath, 'utf8');
    writeFileSync(
      configFile,
      stringify({
        service: {
          apiUrl: s.urls.api,
          authUrl: s.urls.auth,
          clientId: c.clientId,
          clientSecret: writeSecret('client-secret', c.clientSecret),
          apiKey: writeSecret('api-key', c.apiKey),
          tls: { caFile: s.paths.caCert, certFile: s.paths.clientCert, keyFile: s.paths.clientKey },
        },
        stateDir: './state',
        log: { level: 'trace', format: 'json' },
        ops: { listen: '127.0.0.1:0' },
        folders: [
          {
            name: 'invoices',
            source: { type: 'local', path: './in/invoices' },
            create: true,
            workflowId: SEED.workflows.pdfEmail,
            stability: { kind: 'settle', settleMs: 50 },
          },
          {
            name: 'sftp-password',
            source: {
              type: 'sftp',
              host: faultServer.host,
              port: faultServer.port,
              username: faultServer.username,
              password: writeSecret('sftp-password', FAULT_PASSWORD),
              hostKey: { sha256: [faultServer.fingerprint] },
              path: passwordRemote,
              pollIntervalMs: 50,
            },
            workflowId: SEED.workflows.pdfEmail,
            stability: { kind: 'settle', settleMs: 0 },
          },
          {
            name: 'sftp-key',
            source: {
              type: 'sftp',
              host: sshd.host,
              port: sshd.port,
              username: sshd.username,
              privateKeyFile: sshd.privateKeyPath,
              passphrase: writeSecret('sftp-passphrase', passphrase),
              hostKey: { knownHostsFile: sshd.knownHostsFile },
              path: keyRemote,
              pollIntervalMs: 50,
            },
            workflowId: SEED.workflows.pdfEmail,
            stability: { kind: 'settle', settleMs: 0 },
          },
        ],
        webhooks: {
          enabled: true,
          listen: '127.0.0.1:0',
          secrets: [writeSecret('webhook-secret', webhookSecret)],
        },
      }),
    );
    let stop: (signal: string) => void = () => {};
    const stopSignal = new Promise<string>((resolve) => {
      stop = resolve;
    });
    let agent: Agent | undefined;
    let control: StartedControl | undefined;
    const exit = runStart(configFile, {
      stopSignal,
      log: capture.log,
      reloadSignal: () => () => {},
      onStarted: (a, ctl) => {
        agent = a;
        control = ctl;
      },
    });
    await waitFor(() => agent, 15_000);
    await setup.webhooks.update(subscription.id, { url: agent!.inbound!.receiver!.url });
    const client = agent!.client as DocexClient;
    const archive = path.join(inbox, '.archive');
    const errors = path.join(inbox, '.error');
    const archived = (name: string) => () =>
      listFiles(archive).some((f) => f.endsWith(`${name}.result.json`));

    writeFileSync(path.join(inbox, 'one.pdf'), await makePdf('first'));
    writeFileSync(path.join(inbox, 'broken.pdf'), 'this is not a PDF');
    await waitFor(archived('one.pdf'), 15_000);
    await waitFor(() => listFiles(errors).some((f) => f.startsWith('broken.pdf')), 15_000);
    const firstToken = await client.tokens.getToken();

    // One file through each SFTP folder: logged in with the password, and with the encrypted key.
    dropRemote(passwordRemote, 'by-password.pdf', await makePdf('over sftp, password'));
    dropRemote(keyRemote, 'by-key.pdf', await makePdf('over sftp, key with passphrase'));
    const remoteArchived = (remote: string, name: string) => () =>
      listFiles(path.join(remote, '.archive')).some((f) => f.endsWith(name));
    await waitFor(remoteArchived(passwordRemote, 'by-password.pdf'), 20_000);
    await waitFor(remoteArchived(keyRemote, 'by-key.pdf'), 20_000);

    // One failed upload (500 from the files host), retried.
    await sandbox.control('POST', '/_sandbox/faults', { route: '/upload/:jobId', failNext: 1, status: 500 });
    writeFileSync(path.join(inbox, 'two.pdf'), await makePdf('second'));
    await waitFor(archived('two.pdf'), 15_000);

    // The sandbox's clock passes the token's life: the API answers 401 and the agent fetches another.
    // The uploads answered so far are turned into their sending events first, at the time they
    // came: the sandbox's clock moves only here, so events made after the move would never be due.
    await s.settle();
    await s.advanceClock((TOKEN_LIFETIME_SECONDS + 60) * 1000);
    writeFileSync(path.join(inbox, 'three.pdf'), await makePdf('third'));
    await waitFor(archived('three.pdf'), 15_000);
    const secondToken = await client.tokens.getToken();
    expect(secondToken).not.toBe(firstToken);

    // The clock move made the sending events final: signed webhooks nudge the follower, which
    // downloads the proofs; the Peppol inbox has downloaded the seeded documents.
    const logged = (msg: string) => () => capture.lines().some((l) => l['msg'] === msg);
    await waitFor(logged('webhook accepted'), 20_000);
    await waitFor(logged('proof written'), 20_000);
    const peppolInbox = path.join(dir, 'state', 'out', 'peppol-inbox');
    await waitFor(
      () => existsSync(peppolInbox) && readdirSync(peppolInbox).some((f) => f.endsWith('.xml')),
      20_000,
    );

    const ops = [
      await (await fetch(`${control!.opsUrl}/readyz`)).text(),
      await (await fetch(`${control!.opsUrl}/metrics`)).text(),
    ].join('\n');
    expect(ops).toContain('docex_token_refreshes_total{result="ok"} 2');

    stop('SIGTERM');
    expect(await exit).toBe(0);

    // The URL each job was given: signed over its path and its expiry (created + upload window).
    // The files host takes each as genuine (409: already uploaded, not 403: bad signature).
    const signatures: string[] = [];
    for (const job of s.ctx.store.iterate<JobRecord>('job')) {
      const expiresAt = Date.parse(job.createdAt) + s.ctx.settings.uploadWindowMs;
      const url = s.ctx.signer.sign(`/upload/${job.id}`, expiresAt);
      expect((await sandbox.files('PUT', url, { body: 'again' })).status).toBe(409);
      signatures.push(new URL(url).searchParams.get('signature')!);
    }
    expect(signatures).toHaveLength(5);
    const downloads = issued.filter((i) => i.path.startsWith('/download/'));
    expect(downloads.some((d) => d.path.startsWith('/download/peppol/'))).toBe(true);
    expect(downloads.some((d) => !d.path.startsWith('/download/peppol/'))).toBe(true);
    const secrets: Record<string, string> = {
      clientSecret: c.clientSecret,
      apiKey: c.apiKey,
      adminClientSecret: c.admin.clientSecret,
      firstToken,
      secondToken,
      ...Object.fromEntries(signatures.map((sig, i) => [`uploadSignature${i}`, sig])),
      ...Object.fromEntries(pemBodyLines(c.clientKeyPem).map((line, i) => [`privateKeyLine${i}`, line])),
      sftpPassword: FAULT_PASSWORD,
      sftpKeyPassphrase: passphrase,
      ...Object.fromEntries(pemBodyLines(encryptedKey).map((line, i) => [`sftpKeyLine${i}`, line])),
      webhookSecret,
      webhookSecretKey: webhookSecret.slice('whsec_'.length),
      ...Object.fromEntries(issued.map((i, n) => [`issuedSignature${n}:${i.path}`, i.signature])),
    };
    expect(Object.keys(secrets).length).toBeGreaterThan(15);

    const text = capture.raw();
    const lines = capture.lines();
    // The run did log, at every level down to trace, what it went through.
    expect(lines.length).toBeGreaterThan(50);
    expect(lines.filter((l) => l['msg'] === 'token refreshed')).toHaveLength(2);
    expect(lines.some((l) => l['msg'] === 'api request' && l['status'] === 401)).toBe(true);
    expect(lines.some((l) => l['level'] === 'trace' || l['level'] === 'debug')).toBe(true);

    const found = Object.entries(secrets)
      .filter(([, value]) => text.includes(value) || ops.includes(value))
      .map(([name]) => name);
    expect(found).toEqual([]);
    // Any pre-signed URL (uploads, and the downloads of the return path and the Peppol inbox).
    const presigned = /signature=[0-9a-f]{16,}/;
    expect(text).not.toMatch(presigned);

    // Control: the same search finds every value once a line carries it in a field no rule knows.
    for (const [name, value] of Object.entries(secrets))
      capture.log.info({ probe: value, name }, 'control line');
    const after = capture.raw();
    capture.log.info(
      { probe: `${s.urls.files}/download/x?expires=1&signature=${'ab'.repeat(32)}` },
      'control line',
    );
    expect(capture.raw()).toMatch(presigned);
    const missed = Object.entries(secrets)
      .filter(([, value]) => !after.includes(value))
      .map(([name]) => name);
    expect(missed).toEqual([]);
  });
});
