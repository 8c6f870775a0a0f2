/**
 * `docex-agent check [--config <file>]`, the doctor: configuration, files and permissions, a
 * PostgreSQL journal (check-journal.ts), the client certificate, the TLS handshake, a token, the
 * API key, each folder's workflow, folders writable and free disk. One line per check with a mark
 * and a hint to fix it; exit 1 when any check fails (warnings alone pass).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { clientOptionsFromService } from '../agent/connection.js';
import { planFolders, type WorkflowFetch } from '../agent/folders.js';
import { DocexClient, isApiError, type MtlsMaterial } from '../api/index.js';
import { type AgentConfig, loadConfig, readTlsMaterial } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { GUIDE_MODES } from '../core/shared-dir.js';
import { routesOf } from '../pipeline/routes.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { kindOf } from '../sources/kinds.js';
import { openCommandConnection } from './builtin-sandbox.js';
import {
  diskLines,
  dropFolderLine,
  keyFileLine,
  ROOT_NOTICE,
  stateFolderLine,
  writableLine,
} from './check-files.js';
import { journalLines } from './check-journal.js';
import { type CheckLine, failed, formatCheck, plainOutput } from './check-line.js';
import { checkHandshake, type HandshakeOptions } from './check-tls.js';
import { inspectTlsMaterial } from './credentials-inspect.js';

export { type CheckLine, formatCheck } from './check-line.js';

export interface CheckOptions {
  /** Decides certificate expiry (tests). */
  now?: Date;
  handshake?: HandshakeOptions;
  /** Run by root: folders are reported, never made or access-tested (default: this process's uid). */
  asRoot?: boolean;
  /** This host's clock, compared with a PostgreSQL journal's (tests shift it). */
  journalClock?: Clock;
}

/** Whether `dir` is `root` or lies below it. */
function isInside(root: string, dir: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

const text = (err: unknown) => (isDocexError(err) ? `${err.code}: ${err.message}` : String(err));

/** The service part: a client that gives up fast (a doctor should not retry for minutes). */
interface Target {
  client: DocexClient;
  apiUrl: string;
  material: MtlsMaterial;
  sandbox?: RunningSandbox;
}

async function openTarget(config: AgentConfig): Promise<Target> {
  // As the agent does: the built-in sandbox when enabled, else the configured service.
  if (config.service && !config.sandbox.enabled) {
    const options = clientOptionsFromService(config.service);
    const client = new DocexClient({
      ...options,
      log: silentLogger(),
      retry: { maxAttempts: 2, maxTotalMs: 10_000 },
    });
    return { client, apiUrl: options.apiUrl, material: options.tls };
  }
  const { client, sandbox } = await openCommandConnection(config, silentLogger());
  const c = sandbox!.credentials;
  return {
    client,
    apiUrl: sandbox!.urls.api,
    material: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem },
    sandbox: sandbox!,
  };
}

/** Key permissions and the certificate (key match, chain, expiry) of the configured TLS files. */
function tlsFileLines(config: AgentConfig, now: Date): CheckLine[] {
  if (!config.service || config.sandbox.enabled) {
    return [{ ok: true, what: 'tls files', detail: 'built-in sandbox: its own PKI' }];
  }
  const tls = config.service.tls;
  const keyLine = keyFileLine(tls.keyFile);
  if (!keyLine.ok) return [keyLine];
  try {
    return [keyLine, ...inspectTlsMaterial(readTlsMaterial(tls), now)];
  } catch (err) {
    return [
      keyLine,
      { ok: false, what: 'tls files', detail: text(err), hint: 'fix the file named in service.tls' },
    ];
  }
}

async function serviceLines(
  target: Target,
  handshake?: HandshakeOptions,
): Promise<{ lines: CheckLine[]; ok: boolean }> {
  const lines: CheckLine[] = [await checkHandshake(target.apiUrl, target.material, handshake)];
  try {
    await target.client.tokens.getToken();
    lines.push({
      ok: true,
      what: 'token',
      detail: 'obtained (client id, secret and client certificate accepted)',
    });
  } catch (err) {
    lines.push({
      ok: false,
      what: 'token',
      detail: text(err),
      hint: 'check service.authUrl, clientId and clientSecret (and the tls files: the token host asks for the client certificate too)',
    });
    return { lines, ok: false };
  }
  try {
    await target.client.health();
    lines.push({ ok: true, what: 'api key', detail: 'accepted (GET /health answered over mutual TLS)' });
    return { lines, ok: true };
  } catch (err) {
    const keyRefused = isApiError(err) && err.status === 403;
    lines.push({
      ok: false,
      what: 'api key',
      detail: text(err),
      hint: keyRefused
        ? 'the service refused the API key: service.apiKey must be the key of the portal set-up screen'
        : 'check service.apiUrl (the token worked, the API host did not answer as expected)',
    });
    return { lines, ok: false };
  }
}

async function folderLines(config: AgentConfig, fetchWorkflow: WorkflowFetch): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const plan = await planFolders(config.folders, fetchWorkflow, silentLogger());
  for (const runtime of plan.running.values()) {
    const routes = runtime.config.routes;
    // A workflow some route sends to in a mode of its own says so; a {company} route's, each
    // company's workflow, naming the company.
    const targets = routes ? routesOf(runtime.config).targets() : [];
    const shown = [
      ...new Set(
        targets.map(
          (t) =>
            `${t.workflowId}${t.mode ? ` as ${t.mode}` : ''}${t.company === undefined ? '' : ` for ${t.company}`}`,
        ),
      ),
    ];
    // One {company} route has a workflow per company.
    const of =
      routes?.length !== 1
        ? `workflow of each of its ${routes?.length} routes`
        : `workflow${shown.length > 1 ? 's' : ''} of its route`;
    const routed = routes ? `; the ${of} (${shown.join(', ')}) too` : '';
    lines.push({
      ok: true,
      what: `folder ${runtime.config.name}`,
      detail: `workflow ${runtime.config.workflowId} exists, enabled, validated; input ${runtime.workflow.inputSource.type} fits mode ${runtime.mode}${routed}`,
    });
  }
  for (const s of plan.stopped) {
    lines.push({
      ok: false,
      what: `folder ${s.name}`,
      detail: `${s.code}: ${s.reason}`,
      hint: 'fix the workflow in the portal, or the folder workflowId/mode (or its routes)',
    });
  }
  return lines;
}

/** The local folders the agent writes for the ERP: statuses, proofs, the Peppol inbox (when on). */
function localOutputs(config: AgentConfig): Array<readonly [string, string]> {
  const targets = [
    ...(config.returns.enabled
      ? [
          ['statuses', config.returns.statuses.target] as const,
          ['proofs', config.returns.proofs.target] as const,
        ]
      : []),
    ...(config.peppolInbox.enabled ? [['peppol inbox', config.peppolInbox.target] as const] : []),
  ];
  return targets.flatMap(([label, target]) =>
    target.type === 'local' ? [[label, target.path] as const] : [],
  );
}

/** Every check of a loaded configuration, in the order they are best fixed. */
export async function runChecks(config: AgentConfig, options: CheckOptions = {}): Promise<CheckLine[]> {
  const asRoot = options.asRoot ?? process.getuid?.() === 0;
  // As root, once: access is not tested (ROOT_NOTICE); the folder lines then say what is there.
  const lines: CheckLine[] = asRoot ? [ROOT_NOTICE] : [];
  lines.push(await stateFolderLine(config.stateDir, asRoot));
  // The guide's mode of a folder the agent makes: private under the state folder, else the ERP group's.
  const own = (dir: string, madeWhen: string) => ({
    mode: isInside(config.stateDir, dir) ? GUIDE_MODES.state : GUIDE_MODES.shared,
    madeWhen,
  });
  lines.push(...(await journalLines(config, options.journalClock)));
  lines.push(...tlsFileLines(config, options.now ?? new Date()));

  let target: Target | undefined;
  try {
    target = await openTarget(config);
  } catch (err) {
    lines.push({
      ok: false,
      what: 'service',
      detail: text(err),
      hint: 'check service: in the configuration',
    });
  }
  try {
    if (target) {
      const service = await serviceLines(target, options.handshake);
      lines.push(...service.lines);
      const client = target.client;
      if (!service.ok && config.folders.some((f) => f.enabled)) {
        lines.push({
          ok: true,
          warn: true,
          what: 'folder workflows',
          detail: 'not checked: they need the service checks above to pass',
          hint: 'fix the failing lines above, then run check again',
        });
      } else if (service.ok) {
        lines.push(
          ...(await folderLines(config, (id, managedCompanyId) =>
            client.workflows.get(id, managedCompanyId ? { managedCompanyId } : undefined),
          )),
        );
      }
    }
    const enabled = config.folders.filter((f) => f.enabled);
    for (const [i, folder] of config.folders.entries()) {
      if (!folder.enabled) continue;
      // A remote source is checked by its own connection, not as a local folder.
      let missingDrop: string | undefined;
      const drop = kindOf(folder.source).localDropFolder(folder.source);
      if (drop !== undefined) {
        const line = await dropFolderLine(
          `folder ${folder.name} source`,
          drop,
          `folders[${i}]`,
          folder.create,
          asRoot,
        );
        lines.push(line);
        if (!line.ok && !existsSync(drop)) missingDrop = drop;
      }
      for (const [label, dir] of [
        ['archive', folder.archiveDir] as const,
        ['error', folder.errorDir] as const,
      ]) {
        // Made with the drop folder once it is there: not checked (nor made) under a missing one.
        if (missingDrop !== undefined && isInside(missingDrop, dir)) continue;
        lines.push(await writableLine(`folder ${folder.name} ${label}`, dir, asRoot, own(dir, 'at start')));
      }
    }
    const outputs = localOutputs(config);
    for (const [label, dir] of outputs) {
      lines.push(await writableLine(`output ${label}`, dir, asRoot, own(dir, 'at its first write')));
    }
    lines.push(
      ...(await diskLines([
        config.stateDir,
        ...enabled.map((f) => f.archiveDir),
        ...outputs.map(([, dir]) => dir),
      ])),
    );
  } finally {
    await target?.client.close();
    await target?.sandbox?.stop();
  }
  return lines;
}

/** The `check` command, loaded when it runs. */
export async function checkCommand(opts: { config: string }): Promise<void> {
  const plain = plainOutput();
  const print = (line: CheckLine) => process.stdout.write(formatCheck(line, { plain }));
  let config: AgentConfig;
  try {
    const loaded = loadConfig(opts.config);
    config = loaded.config;
    print({ ok: true, what: 'config', detail: `${loaded.file} (${config.folders.length} folders)` });
    for (const warning of loaded.warnings) {
      print({
        ok: true,
        warn: true,
        what: 'config',
        detail: warning,
        hint: 'move the secret to a file or credential',
      });
    }
  } catch (err) {
    print({
      ok: false,
      what: 'config',
      detail: text(err),
      hint: 'fix the file, see config/agent.example.yaml',
    });
    process.exitCode = 1;
    return;
  }
  const lines = await runChecks(config);
  for (const line of lines) print(line);
  process.exitCode = failed(lines) ? 1 : 0;
}
