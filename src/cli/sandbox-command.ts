import path from 'node:path';
import { type Command, Option } from 'commander';
import { NAMES_PROFILES, type NamesProfile } from '../domain/names-profile.js';
import { parseDuration, parsePort, parseSpeed } from './options.js';
import { waitForStopSignal } from './signals.js';

interface SandboxCommandOptions {
  stateDir: string;
  host: string;
  apiPort: number;
  authPort: number;
  filesPort: number;
  adminPort: number;
  uploadWindow?: number;
  speed?: number;
  names: NamesProfile;
}

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description(
      'run the local sandbox of the Document Exchange Service (mTLS API, OAuth, pre-signed uploads)',
    )
    .option('--state-dir <dir>', 'folder of certificates, credentials and data', './var/sandbox')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--api-port <port>', 'port of the API host', parsePort, 8443)
    .option('--auth-port <port>', 'port of the OAuth token host', parsePort, 8444)
    .option('--files-port <port>', 'port of the upload/download and control host', parsePort, 8445)
    .option('--admin-port <port>', 'port of the Interface B (partner administration) host', parsePort, 8446)
    .option(
      '--upload-window <duration>',
      'how long a job waits for its file (e.g. 30s, 10m, 2h)',
      parseDuration,
    )
    .option('--speed <n>', 'run sending events this many times faster', parseSpeed)
    .addOption(
      new Option(
        '--names <profile>',
        "names to speak: the specification's, or the live service's API reference (AWAITING_FOR_FILE, DOCCLE_*)",
      )
        .choices(NAMES_PROFILES)
        .default('spec'),
    )
    .action(async (opts: SandboxCommandOptions) => {
      // Loaded on demand: the CLI entry stays small for every other command.
      const [{ createLogger }, { startSandbox }] = await Promise.all([
        import('../core/logger.js'),
        import('../sandbox/index.js'),
      ]);
      const log = createLogger({ name: 'docex-sandbox' });
      // Handlers go in before anything is announced: a supervisor may signal as soon as it reads the banner.
      const signalled = waitForStopSignal({
        onRepeat: (signal, outcome) => {
          if (outcome === 'forced') log.warn({ signal }, 'second stop signal: exiting now');
        },
      });
      const sandbox = await startSandbox({
        stateDir: opts.stateDir,
        host: opts.host,
        apiPort: opts.apiPort,
        authPort: opts.authPort,
        filesPort: opts.filesPort,
        adminPort: opts.adminPort,
        ...(opts.uploadWindow !== undefined ? { uploadWindowMs: opts.uploadWindow } : {}),
        speed: opts.speed ?? 1,
        names: opts.names,
        log,
      });
      process.stdout.write(
        [
          'docex sandbox running',
          `  API:              ${sandbox.urls.api}`,
          `  OAuth token:      ${sandbox.urls.auth}/oauth2/token`,
          `  files + control:  ${sandbox.urls.files}  (control API: ${sandbox.urls.control}/state)`,
          `  credentials:      ${path.join(sandbox.paths.stateDir, 'credentials.json')} (mode 0600)`,
          `  CA certificate:   ${sandbox.paths.caCert}`,
          `  client cert/key:  ${sandbox.paths.clientCert}, ${sandbox.paths.clientKey}`,
          `  Interface B:      ${sandbox.urls.admin}  (partner-admin client in admin-credentials.json)`,
          `  agent config:     ${sandbox.paths.agentConfigFragment}`,
          `  names:            ${opts.names}`,
          'Press Ctrl+C to stop.',
          '',
        ].join('\n'),
      );
      const signal = await signalled;
      log.info({ signal }, 'stopping sandbox');
      await sandbox.stop();
      log.flush();
    });
}
