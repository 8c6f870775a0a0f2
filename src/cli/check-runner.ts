/**
 * `docex-agent check [--config <file>]`: configuration, connectivity (a token and one call), each
 * folder's workflow and folders writable; one line per check with a mark and a hint to fix it.
 * Exit 1 when any check fails.
 */
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { type Connection, openConnection } from '../agent/connection.js';
import { planFolders, type WorkflowFetch } from '../agent/folders.js';
import { type AgentConfig, loadConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';

export interface CheckLine {
  ok: boolean;
  what: string;
  detail: string;
  hint?: string;
}

const text = (err: unknown) => (isDocexError(err) ? `${err.code}: ${err.message}` : String(err));

export function formatCheck(line: CheckLine): string {
  const hint = !line.ok && line.hint ? `\n    fix: ${line.hint}` : '';
  return `${line.ok ? '✔' : '✘'} ${line.what}: ${line.detail}${hint}\n`;
}

async function writable(dir: string): Promise<string | undefined> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o750 });
    await access(dir, constants.W_OK | constants.R_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

/** Every check of a loaded configuration; `fetchWorkflow` and `token` are injectable for tests. */
export async function runChecks(
  config: AgentConfig,
  deps?: { token(): Promise<unknown>; call(): Promise<unknown>; fetchWorkflow: WorkflowFetch },
): Promise<CheckLine[]> {
  const lines: CheckLine[] = [];
  const stateProblem = await writable(config.stateDir);
  lines.push({
    ok: stateProblem === undefined,
    what: 'state folder',
    detail: stateProblem
      ? `${config.stateDir} is not writable (${stateProblem})`
      : `${config.stateDir} writable`,
    hint: 'create the folder and give the agent user read/write access',
  });
  let connection: Connection | undefined;
  if (!deps) {
    try {
      connection = await openConnection(config, silentLogger());
    } catch (err) {
      lines.push({
        ok: false,
        what: 'service',
        detail: text(err),
        hint: 'check service: in the configuration',
      });
      return lines;
    }
  }
  const client = connection?.client;
  const calls = deps ?? {
    token: () => client!.tokens.getToken(),
    call: () => client!.health(),
    fetchWorkflow: ((id, managedCompanyId) =>
      client!.workflows.get(id, managedCompanyId ? { managedCompanyId } : undefined)) as WorkflowFetch,
  };
  try {
    let connected = false;
    try {
      await calls.token();
      lines.push({
        ok: true,
        what: 'token',
        detail: 'obtained (client id, secret and client certificate accepted)',
      });
      await calls.call();
      lines.push({ ok: true, what: 'service', detail: 'answered GET /health over mutual TLS' });
      connected = true;
    } catch (err) {
      lines.push({
        ok: false,
        what: 'service',
        detail: text(err),
        hint: 'check apiUrl/authUrl, the client id and secret, the API key and the tls files (docex-agent check names the failing one)',
      });
    }
    if (connected) {
      const plan = await planFolders(config.folders, calls.fetchWorkflow, silentLogger());
      for (const rt of plan.running.values()) {
        const type = rt.workflow.inputSource.type;
        lines.push({
          ok: true,
          what: `folder ${rt.config.name}`,
          detail: `workflow ${rt.config.workflowId} (${type}, ${rt.mode})`,
        });
      }
      for (const s of plan.stopped) {
        lines.push({
          ok: false,
          what: `folder ${s.name}`,
          detail: `${s.code}: ${s.reason}`,
          hint: 'fix the workflow or the folder workflowId/mode',
        });
      }
    }
    for (const folder of config.folders.filter((f) => f.enabled)) {
      for (const [label, dir] of [
        ['source', folder.source.path],
        ['archive', folder.archiveDir],
        ['error', folder.errorDir],
      ] as const) {
        const problem = await writable(dir);
        lines.push({
          ok: problem === undefined,
          what: `folder ${folder.name} ${label}`,
          detail: problem ? `${dir} is not writable (${problem})` : `${dir} writable`,
          hint: `create ${dir} and give the agent user read/write access`,
        });
      }
    }
  } finally {
    await connection?.client.close();
    await connection?.sandbox?.stop();
  }
  return lines;
}

/** The `check` command, loaded when it runs. */
export async function checkCommand(opts: { config: string }): Promise<void> {
  let config: AgentConfig;
  try {
    const loaded = loadConfig(opts.config);
    config = loaded.config;
    process.stdout.write(
      formatCheck({
        ok: true,
        what: 'config',
        detail: `${loaded.file} (${config.folders.length} folders)`,
      }),
    );
    for (const warning of loaded.warnings) process.stdout.write(`! config: ${warning}\n`);
  } catch (err) {
    process.stdout.write(
      formatCheck({
        ok: false,
        what: 'config',
        detail: text(err),
        hint: 'fix the file, see config/agent.example.yaml',
      }),
    );
    process.exitCode = 1;
    return;
  }
  const lines = await runChecks(config);
  for (const line of lines) process.stdout.write(formatCheck(line));
  process.exitCode = lines.every((l) => l.ok) ? 0 : 1;
}
