/**
 * `docex-agent webhooks list|create|update|delete|reset-secret|test`: webhook subscriptions of
 * Interface A. Options here; the work (webhooks-runner.ts) is loaded when a command runs.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { WebhookEventType } from '../domain/wire.js';
import type { ServiceCliDeps } from './service-cli-deps.js';
import { DEFAULT_CONFIG_FILE } from './start-command.js';

/**
 * The event types, written out here so `docex-agent --help` does not load the wire schemas (zod);
 * a test keeps the list equal to WEBHOOK_EVENT_TYPES.
 */
export const EVENT_TYPE_CHOICES = [
  'job.status.changed',
  'sending.event.status.changed',
  'sending.event.file.ready',
  'peppol.document.received',
] as const satisfies readonly WebhookEventType[];

function parseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    return value;
  } catch {
    throw new InvalidArgumentError(`not an http(s) URL: ${value}`);
  }
}

function parseName(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('the name must not be empty');
  return value.trim();
}

/** The options every service command takes: the configuration file and the output format. */
export function serviceCommandOptions(command: Command): Command {
  return command
    .option(
      '-c, --config <file>',
      'agent configuration (its service, or the running sandbox when sandbox.enabled)',
      DEFAULT_CONFIG_FILE,
    )
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['json', 'table']).default('table'),
    );
}

function withSecretOptions(command: Command): Command {
  return command
    .option('--state-dir <dir>', 'where the secret is kept (default: stateDir of the configuration)')
    .option('--print-secret', 'print the secret once instead of storing it in the state folder');
}

const eventsOption = () => new Option('--events <types...>', 'event types').choices([...EVENT_TYPE_CHOICES]);

export function registerWebhooksCommand(program: Command, deps: ServiceCliDeps = {}): void {
  const webhooks = program.command('webhooks').description('webhook subscriptions of the company');
  const run =
    (name: 'list' | 'create' | 'update' | 'delete' | 'resetSecret' | 'test') =>
    async (...args: unknown[]) => {
      const runner = await import('./webhooks-runner.js');
      await runner.runWebhooks(name, args, deps);
    };

  serviceCommandOptions(webhooks.command('list')).description('list the subscriptions').action(run('list'));

  withSecretOptions(serviceCommandOptions(webhooks.command('create')))
    .description('subscribe a URL (the receiver behind your reverse proxy) to event types')
    .requiredOption('--url <url>', 'where deliveries are posted', parseUrl)
    .addOption(eventsOption().makeOptionMandatory())
    // The live reference names every subscription: always send one.
    .option('--name <text>', 'internal name of the subscription', parseName, 'docex-agent')
    .option('--description <text>', 'free text')
    .option('--disabled', 'create it disabled')
    .action(run('create'));

  serviceCommandOptions(webhooks.command('update <id>'))
    .description('change a subscription')
    .option('--url <url>', 'new URL', parseUrl)
    .addOption(eventsOption())
    .option('--name <text>', 'new internal name', parseName)
    .option('--description <text>', 'new description')
    .option('--enable', 'enable deliveries')
    .option('--disable', 'disable deliveries')
    .action(run('update'));

  serviceCommandOptions(webhooks.command('delete <id>'))
    .description('delete a subscription and forget its stored secret')
    .option('--state-dir <dir>', 'where the secret is kept (default: stateDir of the configuration)')
    .action(run('delete'));

  withSecretOptions(serviceCommandOptions(webhooks.command('reset-secret <id>')))
    .description('replace the signing secret; the replaced one stays accepted until the next reset')
    .action(run('resetSecret'));

  serviceCommandOptions(webhooks.command('test <id>'))
    .description('have the service send a test event; exit 0 only when the subscriber answered 2xx')
    .addOption(
      new Option('--event <type>', 'event type (needed when subscribed to several)').choices([
        ...EVENT_TYPE_CHOICES,
      ]),
    )
    .action(run('test'));
}
