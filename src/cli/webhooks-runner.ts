/**
 * The webhook subscription commands, and the client of a configuration for the commands that
 * call Interface A once (webhooks, resend). A configuration with `sandbox.enabled` talks to the
 * sandbox already running for it (`npm start`), through the fragment the sandbox writes in its
 * state folder: starting a second one here would take its ports.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { clientOptionsFromService } from '../agent/connection.js';
import { DocexClient, type DocexClientOptions } from '../api/index.js';
import { type AgentConfig, loadConfig } from '../config/index.js';
import { DocexError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import type { WebhookEventType, WebhookSubscription } from '../domain/wire.js';
import { removeWebhookSecrets, storeWebhookSecret } from '../returns/webhook-secrets.js';
import { type CliIo, processIo, runReported, writeOut } from './output/cli-io.js';
import { type OutputFormat, render } from './output/render.js';
import type { ServiceCliDeps } from './service-cli-deps.js';

export const SANDBOX_FRAGMENT = 'agent-config.yaml';
const COLUMNS = ['id', 'name', 'url', 'eventTypes', 'enabled', 'description'] as const;

export interface ServiceRun {
  client: DocexClient;
  config: AgentConfig;
  io: CliIo;
  format: OutputFormat;
  print(value: unknown, columns?: readonly string[]): Promise<void>;
}

/** The connection of a configuration file: its `service`, or the fragment of its running sandbox. */
export function serviceClientOptions(configFile: string): {
  config: AgentConfig;
  options: DocexClientOptions;
} {
  const { config } = loadConfig(configFile);
  if (config.service) return { config, options: clientOptionsFromService(config.service) };
  const fragment = path.join(config.sandbox.stateDir, SANDBOX_FRAGMENT);
  if (!existsSync(fragment)) {
    throw new DocexError(
      'DOCEX_CLI_USAGE',
      `${configFile} uses the built-in sandbox, which has not run yet (no ${fragment}): start the agent first`,
    );
  }
  const service = loadConfig(fragment).config.service;
  if (!service) throw new DocexError('DOCEX_CONFIG_INVALID', `${fragment}: service is missing`);
  return { config, options: clientOptionsFromService(service) };
}

/** Runs `action` with a client for the command's configuration; closes it after. */
export async function withServiceClient(
  deps: ServiceCliDeps,
  opts: { config: string; output?: OutputFormat },
  action: (run: ServiceRun) => Promise<void>,
): Promise<void> {
  const io = deps.io ?? processIo();
  await runReported(io, async () => {
    const { config, options } = serviceClientOptions(opts.config);
    const log = createLogger({ level: process.env['DOCEX_LOG_LEVEL'] ?? 'warn' });
    const full = { ...options, log };
    const client = deps.createClient ? deps.createClient(full) : new DocexClient(full);
    const format = opts.output ?? 'table';
    try {
      await action({
        client,
        config,
        io,
        format,
        print: (value, columns) => writeOut(io.stdout, render(value, format, columns)),
      });
    } finally {
      await client.close();
    }
  });
}

interface WebhookCommonOpts {
  config: string;
  output: 'json' | 'table';
  stateDir?: string;
}

interface CreateOpts extends WebhookCommonOpts {
  url: string;
  events: WebhookEventType[];
  name: string;
  description?: string;
  disabled?: boolean;
  printSecret?: boolean;
}

interface UpdateOpts extends WebhookCommonOpts {
  url?: string;
  events?: WebhookEventType[];
  name?: string;
  description?: string;
  enable?: boolean;
  disable?: boolean;
}

function withoutSecret(s: WebhookSubscription): Omit<WebhookSubscription, 'secret'> {
  const { secret: _secret, ...rest } = s;
  return rest;
}

/** Stores the secret (mode 0600) or, with --print-secret, prints it once; never both. */
async function handleSecret(
  run: ServiceRun,
  opts: { stateDir?: string; printSecret?: boolean },
  subscriptionId: string,
  secret: string,
): Promise<void> {
  if (opts.printSecret) {
    await writeOut(run.io.stdout, `secret: ${secret}\n`);
    run.io.stderr.write('the secret is shown once and was not stored: keep it in your secret store now\n');
    return;
  }
  const stateDir = opts.stateDir ? path.resolve(opts.stateDir) : run.config.stateDir;
  const file = storeWebhookSecret(stateDir, subscriptionId, secret);
  run.io.stderr.write(`secret stored in ${file} (mode 0600); a running receiver uses it at once\n`);
}

export async function runWebhooks(
  name: 'list' | 'create' | 'update' | 'delete' | 'resetSecret' | 'test',
  args: unknown[],
  deps: ServiceCliDeps,
): Promise<void> {
  const command = args[args.length - 1] as Command;
  const opts = command.opts() as WebhookCommonOpts & Partial<CreateOpts> & Record<string, unknown>;
  const id = typeof args[0] === 'string' ? args[0] : '';
  await withServiceClient(deps, opts, async (run) => {
    const api = run.client.webhooks;
    switch (name) {
      case 'list': {
        const items: WebhookSubscription[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await api.list({ ...(after ? { after } : {}), maxItems: 100 });
          items.push(...page.items);
          if (page.items.length < 100) break;
          after = page.items[page.items.length - 1]!.id;
        }
        await run.print(run.format === 'json' ? { items } : items, COLUMNS);
        return;
      }
      case 'create': {
        const o = opts as CreateOpts;
        const created = await api.create({
          url: o.url,
          eventTypes: o.events,
          name: o.name,
          enabled: !o.disabled,
          ...(o.description !== undefined ? { description: o.description } : {}),
        });
        await run.print(withoutSecret(created));
        if (!created.secret) throw new DocexError('DOCEX_RESPONSE_INVALID', 'the service answered no secret');
        await handleSecret(run, o, created.id, created.secret);
        return;
      }
      case 'update': {
        const o = opts as UpdateOpts;
        if (o.enable && o.disable)
          throw new DocexError('DOCEX_CLI_USAGE', '--enable and --disable contradict');
        const patch = {
          ...(o.url !== undefined ? { url: o.url } : {}),
          ...(o.events !== undefined ? { eventTypes: o.events } : {}),
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.enable ? { enabled: true } : o.disable ? { enabled: false } : {}),
        };
        if (Object.keys(patch).length === 0) {
          throw new DocexError(
            'DOCEX_CLI_USAGE',
            'nothing to change: give --url, --events, --name, --description, --enable or --disable',
          );
        }
        await run.print(withoutSecret(await api.update(id, patch)));
        return;
      }
      case 'delete': {
        await api.delete(id);
        removeWebhookSecrets(opts.stateDir ? path.resolve(opts.stateDir) : run.config.stateDir, id);
        await writeOut(run.io.stdout, `deleted ${id}\n`);
        return;
      }
      case 'resetSecret': {
        const { secret } = await api.resetSecret(id);
        await handleSecret(run, opts, id, secret);
        return;
      }
      case 'test': {
        const event = opts['event'] as WebhookEventType | undefined;
        const { status } = await api.test(id, event);
        await run.print({ id, status });
        if (status < 200 || status > 299) {
          throw new DocexError(
            'DOCEX_WEBHOOK_TEST_FAILED',
            status === 0 ? 'the subscriber did not answer' : `the subscriber answered ${status}`,
          );
        }
        return;
      }
    }
  });
}
