/**
 * The shared plumbing of `docex-agent admin …` and `docex-agent usage …`: options read from the
 * command and its parents, an AdminClient built from the connection file, JSON bodies from
 * `--data`, and output in the chosen format.
 */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { AdminClient, AdminClientOptions } from '../../api/admin/index.js';
import { type CliIo, processIo, runReported, writeOut } from './cli-io.js';
import { type OutputFormat, render } from './render.js';

export interface AdminCliDeps {
  io?: CliIo;
  /** Builds the client (tests pass options through or wrap it). */
  createClient?: (options: AdminClientOptions) => AdminClient;
}

export interface AdminRun {
  client: AdminClient;
  io: CliIo;
  format: OutputFormat;
  /** Prints a value in the chosen format; `columns` pick a list's table columns. */
  print(value: unknown, columns?: readonly string[]): Promise<void>;
}

export const DEFAULT_CONFIG = 'docex-agent.yaml';

export function connectionOptions(command: Command): Command {
  return command
    .option(
      '-c, --config <file>',
      'YAML file with the service connection (service.admin for Interface B)',
      DEFAULT_CONFIG,
    )
    .addOption(
      new Option('-o, --output <format>', 'output format').choices(['json', 'table']).default('table'),
    );
}

/** Runs `action` with a client for the command's connection; closes it after. */
export function adminAction<A extends unknown[]>(
  deps: AdminCliDeps,
  action: (run: AdminRun, ...args: A) => Promise<void>,
) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const opts = command.optsWithGlobals() as { config: string; output: OutputFormat };
    const io = deps.io ?? processIo();
    await runReported(io, async () => {
      // Loaded on demand: the CLI entry stays small for every other command.
      const { adminClientOptions, loadServiceConnection } = await import('../service-connection.js');
      const options = adminClientOptions(loadServiceConnection(opts.config), opts.config);
      const client = deps.createClient
        ? deps.createClient(options)
        : new (await import('../../api/admin/index.js')).AdminClient(options);
      const format = opts.output ?? 'table';
      try {
        await action(
          {
            client,
            io,
            format,
            print: (value, columns) => writeOut(io.stdout, render(value, format, columns)),
          },
          ...(args.slice(0, -1) as A),
        );
      } finally {
        await client.close();
      }
    });
  };
}

/** `--data '{"name":"x"}'` or `--data @body.json`: a JSON object. */
export function parseData(value: string): Record<string, unknown> {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch {
      throw new InvalidArgumentError(`cannot read ${value.slice(1)}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError('must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`not a positive integer: ${value}`);
  return n;
}

/** A date or date-time; the wire format is made by the client. */
export function parseDate(value: string): string {
  if (Number.isNaN(Date.parse(value))) throw new InvalidArgumentError(`not a date or date-time: ${value}`);
  return new Date(Date.parse(value)).toISOString();
}
