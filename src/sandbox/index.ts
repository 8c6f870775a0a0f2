import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { stringify } from 'yaml';
import { type Clock, systemClock } from '../core/clock.js';
import { createLogger, type Logger } from '../core/logger.js';
import type { NamesProfile } from '../domain/names-profile.js';
import { type AdminCredentials, loadAdminCredentials, registerAdminRoutes } from './admin/index.js';
import { writeSecretFile } from './atomic-file.js';
import { authenticate, createTokenHandler, newCredentials, type SandboxCredentials } from './auth.js';
import { UploadReader, type UploadReaderLimits } from './content/upload-reader.js';
import { SandboxClock, type SandboxContext, type SandboxSettings, type SandboxUrls } from './context.js';
import { FaultInjector } from './faults.js';
import { Router } from './http.js';
import { InFlight } from './in-flight.js';
import { Lifecycle } from './lifecycle.js';
import { ensurePki } from './pki.js';
import { registerAccountRoutes } from './routes/accounts.js';
import { registerControlRoutes } from './routes/control.js';
import { registerFileRoutes } from './routes/files.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerPeppolRoutes } from './routes/peppol.js';
import { registerSendingEventRoutes } from './routes/sending-events.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerWorkflowRoutes } from './routes/workflows.js';
import { addPeppolDocument, seedSandbox } from './seed.js';
import { createRequestHandler } from './server.js';
import { createUrlSigner } from './signer.js';
import { Store } from './store.js';
import { SPOOL_SUFFIX } from './upload-processing.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';

export interface SandboxOptions {
  stateDir: string;
  host?: string;
  apiPort?: number;
  authPort?: number;
  filesPort?: number;
  /** Interface B (partner administration) host; 0 or absent: any free port. */
  adminPort?: number;
  uploadWindowMs?: number;
  speed?: number;
  maxUploadBytes?: number;
  /** Worker threads that read uploads, the heap and the time one upload may take (upload-reader.ts). */
  uploadReader?: Partial<UploadReaderLimits>;
  /** The names the sandbox speaks: the specification's (default) or the live reference's. */
  names?: NamesProfile;
  clock?: Clock;
  log?: Logger;
  tickIntervalMs?: number;
}

export interface RunningSandbox {
  urls: SandboxUrls;
  credentials: SandboxCredentials & {
    caCertPem: string;
    clientCertPem: string;
    clientKeyPem: string;
    /** The partner-admin client of Interface B (same x-api-key). */
    admin: AdminCredentials;
  };
  paths: {
    stateDir: string;
    caCert: string;
    clientCert: string;
    clientKey: string;
    agentConfigFragment: string;
  };
  ctx: SandboxContext;
  /**
   * Moves the sandbox clock forward and runs everything that became due; the promise resolves when
   * that work is written and never rejects (a failure is logged), so callers may ignore it.
   */
  advanceClock(ms: number): Promise<void>;
  tick(): void;
  /** Resolves once the work started by ticks so far (proof generation) is written. */
  settle(): Promise<void>;
  /** Request handlers running now (a test's request is in hand, e.g. asleep in an injected latency). */
  requestsInFlight(): number;
  stop(): Promise<void>;
}

const GIB = 1024 * 1024 * 1024;
const STOP_WAIT_MS = 5_000;

function loadCredentials(stateDir: string): SandboxCredentials {
  const file = path.join(stateDir, 'credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as SandboxCredentials;
  const credentials = newCredentials();
  writeSecretFile(file, `${JSON.stringify(credentials, null, 2)}\n`);
  return credentials;
}

function idFactory(clock: Clock): (prefix: string) => string {
  let counter = 0;
  return (prefix) => {
    counter = (counter + 1) % 36 ** 4;
    const time = clock.now().toString(36).padStart(9, '0');
    return `${prefix}_${time}${counter.toString(36).padStart(4, '0')}${randomBytes(3).toString('hex')}`;
  };
}

/**
 * The item spools a crash left behind (an orderly stop removes its own): a job whose upload was
 * being processed reads its file again at this start (upload-processing.ts).
 */
function removeSpools(blobDir: string): void {
  for (const name of readdirSync(blobDir)) {
    if (name.endsWith(SPOOL_SUFFIX)) rmSync(path.join(blobDir, name), { force: true });
  }
}

async function listen(server: https.Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `https://${shownHost}:${address.port}`;
}

/**
 * Every TCP connection of the server from its accept on. The HTTP layer knows a connection only
 * once its TLS handshake is done, so closeAllConnections misses one still in its handshake.
 */
function openSockets(server: https.Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

async function close(server: https.Server, sockets: Set<Socket>): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
    // A connection still in its TLS handshake would otherwise live on: answered after this, it
    // holds close() until its keep-alive timeout (30 s); never answered, until the handshake timeout.
    for (const socket of sockets) socket.destroy();
  });
}

/** Starts the sandbox: four HTTPS hosts (api, auth, files, admin) over one state folder (docs/sandbox.md). */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const stateDir = path.resolve(options.stateDir);
  const blobDir = path.join(stateDir, 'blobs');
  const secretsDir = path.join(stateDir, 'secrets');
  mkdirSync(blobDir, { recursive: true });
  removeSpools(blobDir);
  mkdirSync(secretsDir, { recursive: true, mode: 0o700 });
  const log = options.log ?? createLogger({ name: 'docex-sandbox' });
  // Certificates are checked against real time by TLS, whatever the sandbox clock says.
  const pki = ensurePki(path.join(stateDir, 'pki'), Date.now());
  const credentials = loadCredentials(stateDir);
  const adminCredentials = loadAdminCredentials(stateDir);
  const store = new Store(path.join(stateDir, 'sandbox.db'));

  const clock = new SandboxClock(options.clock ?? systemClock);
  const savedOffset = Number(store.getMeta('clock-offset-ms') ?? 0);
  if (savedOffset > 0) clock.advance(savedOffset);
  let signingSecret = store.getMeta('url-signing-secret');
  if (!signingSecret) {
    signingSecret = randomBytes(32).toString('hex');
    store.setMeta('url-signing-secret', signingSecret);
  }

  const settings: SandboxSettings = {
    uploadWindowMs: options.uploadWindowMs ?? 2 * 3600 * 1000,
    speed: options.speed ?? 1,
    maxUploadBytes: options.maxUploadBytes ?? 5 * GIB,
    downloadUrlValidityMs: 10 * 60 * 1000,
    names: options.names ?? 'spec',
  };
  const urls: SandboxUrls = { api: '', auth: '', files: '', control: '', admin: '' };
  const signer = createUrlSigner(Buffer.from(signingSecret, 'hex'), () => urls.files, clock);
  const uploadReader = new UploadReader(options.uploadReader);
  const base = { store, clock, log, settings, urls, signer, blobDir, uploadReader, newId: idFactory(clock) };
  const dispatcher = new WebhookDispatcher(base);
  const ctx: SandboxContext = { ...base, emit: (event) => dispatcher.enqueue(event) };

  seedSandbox(ctx);
  const lifecycle = new Lifecycle(ctx);
  lifecycle.load();
  const faults = new FaultInjector();

  const apiRouter = new Router();
  registerJobRoutes(apiRouter, ctx, lifecycle);
  registerSendingEventRoutes(apiRouter, ctx, lifecycle);
  registerWorkflowRoutes(apiRouter, ctx);
  registerPeppolRoutes(apiRouter, ctx);
  registerAccountRoutes(apiRouter, ctx);
  registerWebhookRoutes(apiRouter, ctx);

  const authRouter = new Router();
  authRouter.add('POST', '/oauth2/token', createTokenHandler(ctx, credentials));

  const advanceClock = async (ms: number) => {
    clock.advance(ms);
    store.setMeta('clock-offset-ms', String(Number(store.getMeta('clock-offset-ms') ?? 0) + ms));
    lifecycle.tick();
    await lifecycle.idle();
  };
  const filesRouter = new Router();
  registerFileRoutes(filesRouter, ctx, lifecycle, faults);
  registerControlRoutes(filesRouter, ctx, {
    lifecycle,
    faults,
    advanceClock,
    addPeppolDocument: (xml) => addPeppolDocument(ctx, xml),
  });

  const adminRouter = new Router();
  registerAdminRoutes(adminRouter, ctx, { credentials: adminCredentials, apiKey: credentials.apiKey });

  const tls = { key: pki.serverKeyPem, cert: pki.serverCertPem, ca: [pki.caCertPem] };
  const mtls = { ...tls, requestCert: true, rejectUnauthorized: true };
  const inFlight = new InFlight();
  const common = { ctx, lifecycle, faults, inFlight };
  const apiServer = https.createServer(
    mtls,
    createRequestHandler({
      ...common,
      router: apiRouter,
      authenticate: (req) => authenticate(ctx, credentials, req),
    }),
  );
  const authServer = https.createServer(mtls, createRequestHandler({ ...common, router: authRouter }));
  const filesServer = https.createServer(
    tls,
    createRequestHandler({ ...common, router: filesRouter, controlPrefix: '/_sandbox/' }),
  );
  // Interface B: server TLS only, no client certificate (decisions, Authentication).
  const adminServer = https.createServer(tls, createRequestHandler({ ...common, router: adminRouter }));
  const servers = [apiServer, authServer, filesServer, adminServer];
  const sockets = new Map(servers.map((server) => [server, openSockets(server)] as const));
  const closeServer = (server: https.Server) => close(server, sockets.get(server)!);
  for (const server of servers) {
    server.keepAliveTimeout = 30_000;
    server.headersTimeout = 35_000;
    // Uploads of gigabytes take a while: no whole-request timeout.
    server.requestTimeout = 0;
  }

  const host = options.host ?? '127.0.0.1';
  try {
    urls.api = await listen(apiServer, host, options.apiPort ?? 0);
    urls.auth = await listen(authServer, host, options.authPort ?? 0);
    urls.files = await listen(filesServer, host, options.filesPort ?? 0);
    urls.admin = await listen(adminServer, host, options.adminPort ?? 0);
  } catch (err) {
    await Promise.all(servers.map((s) => (s.listening ? closeServer(s) : Promise.resolve())));
    await uploadReader.close();
    store.close();
    throw err;
  }
  urls.control = `${urls.files}/_sandbox`;

  const paths = {
    stateDir,
    caCert: pki.paths.caCert,
    clientCert: pki.paths.clientCert,
    clientKey: pki.paths.clientKey,
    agentConfigFragment: path.join(stateDir, 'agent-config.yaml'),
  };
  writeAgentConfig(paths, secretsDir, urls, credentials, adminCredentials);
  writeFileSync(
    path.join(stateDir, 'sandbox.json'),
    `${JSON.stringify({ urls, pid: process.pid, startedAt: new Date().toISOString() }, null, 2)}\n`,
  );

  dispatcher.start();
  const timer = setInterval(() => lifecycle.tick(), options.tickIntervalMs ?? 250);
  timer.unref();
  log.info(
    { api: urls.api, auth: urls.auth, files: urls.files, admin: urls.admin, stateDir, names: settings.names },
    'sandbox started',
  );

  let stopped = false;
  return {
    urls,
    credentials: {
      ...credentials,
      caCertPem: pki.caCertPem,
      clientCertPem: pki.clientCertPem,
      clientKeyPem: pki.clientKeyPem,
      admin: adminCredentials,
    },
    paths,
    ctx,
    advanceClock: (ms) =>
      advanceClock(ms).catch((err: unknown) => log.error({ err }, 'advancing the sandbox clock failed')),
    tick: () => lifecycle.tick(),
    settle: () => lifecycle.idle(),
    requestsInFlight: () => inFlight.size,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      faults.stop();
      lifecycle.stop();
      // A file being read is abandoned at once (its job resumes at the next start).
      const reading = uploadReader.close();
      await Promise.all(servers.map(closeServer));
      // Handlers still running (a slow upload, a proof) must finish before the store closes.
      if (!(await inFlight.drained(STOP_WAIT_MS))) {
        log.warn({ inFlight: inFlight.size }, 'stopping with requests still running');
      }
      await lifecycle.idle();
      await dispatcher.stop();
      await reading;
      store.close();
      log.info({ stateDir }, 'sandbox stopped');
    },
  };
}

/**
 * A ready-to-use fragment of the agent's configuration. Secrets are referenced as files (mode
 * 0600), never written inline, so the fragment can be shown or copied safely.
 */
function writeAgentConfig(
  paths: RunningSandbox['paths'],
  secretsDir: string,
  urls: SandboxUrls,
  credentials: SandboxCredentials,
  admin: AdminCredentials,
): void {
  const clientSecretFile = path.join(secretsDir, 'client-secret');
  const apiKeyFile = path.join(secretsDir, 'api-key');
  writeSecretFile(clientSecretFile, credentials.clientSecret);
  writeSecretFile(apiKeyFile, credentials.apiKey);
  const adminSecretFile = path.join(secretsDir, 'admin-client-secret');
  writeSecretFile(adminSecretFile, admin.clientSecret);
  const fragment = {
    service: {
      apiUrl: urls.api,
      authUrl: urls.auth,
      clientId: credentials.clientId,
      clientSecret: `\${file:${clientSecretFile}}`,
      apiKey: `\${file:${apiKeyFile}}`,
      tls: { caFile: paths.caCert, certFile: paths.clientCert, keyFile: paths.clientKey },
      // Interface B: its own host and token endpoint, server TLS only (the CA above).
      admin: {
        apiUrl: urls.admin,
        authUrl: urls.admin,
        clientId: admin.clientId,
        clientSecret: `\${file:${adminSecretFile}}`,
        apiKey: `\${file:${apiKeyFile}}`,
      },
    },
  };
  const header =
    '# docex-agent configuration fragment for the local sandbox; rewritten at every sandbox start.\n';
  writeFileSync(paths.agentConfigFragment, header + stringify(fragment));
}
