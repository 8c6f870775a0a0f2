/**
 * Reads the YAML configuration: parse, substitute `${env:}`/`${file:}`, validate with the schema,
 * resolve relative paths against the file's folder. `parseConfig` is the core (text and
 * dependencies in, config out); `loadConfig` adds the file system.
 */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { DocexError } from '../core/errors.js';
import { octalMode } from '../core/file-mode.js';
import { SECRET_CONFIG_KEYS } from '../core/log-redact.js';
import { configErrorText, formatIssues } from './issues.js';
import { findPathConflicts, resolveConfigPaths } from './resolve-paths.js';
import { type AgentConfig, agentConfigSchema } from './schema.js';
import { formatConfigPath, type SubstitutionDeps, substituteReferences } from './substitute.js';

export interface LoadedConfig {
  config: AgentConfig;
  /** Absolute path of the configuration file (or of its stand-in for parseConfig). */
  file: string;
  /** Things that work but should change, e.g. a secret written inline. */
  warnings: string[];
}

export interface ParseConfigDeps {
  /** Folder relative paths (and `${file:}` references) are resolved against. */
  baseDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Content of an absolute file path referenced by `${file:}`; `at` names the config value. */
  readSecretFile(file: string, at: string): string;
  /** Shown in error messages. */
  file?: string;
  /** See LoadConfigOptions.secretsOnlyUnder. */
  secretsOnlyUnder?: readonly string[];
}

/** Whether config path `at` is `prefix` or lies under it (`journal` holds `journal.password`). */
function isUnder(at: string, prefix: string): boolean {
  return at === prefix || at.startsWith(`${prefix}.`) || at.startsWith(`${prefix}[`);
}

/** Config paths of secret-named keys (see SECRET_CONFIG_KEYS) that hold a text value. */
function secretPaths(node: unknown, parts: PropertyKey[] = []): string[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => secretPaths(item, [...parts, i]));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    typeof value === 'string' && SECRET_CONFIG_KEYS.has(key)
      ? [formatConfigPath([...parts, key])]
      : secretPaths(value, [...parts, key]),
  );
}

function invalid(file: string, problems: string[]): DocexError {
  return new DocexError(
    'DOCEX_CONFIG_INVALID',
    `invalid configuration ${file}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    { details: { file, problems } },
  );
}

/** Parses and validates configuration text. Throws DocexError DOCEX_CONFIG_*. */
export function parseConfig(text: string, deps: ParseConfigDeps): LoadedConfig {
  const file = deps.file ?? path.join(deps.baseDir, '(inline)');
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // First line only ("… at line 2, column 11"): the quoted source line could hold an inline secret.
    const problems = doc.errors.map((e) => (e.message.split('\n')[0] ?? '').replace(/:$/, ''));
    throw new DocexError('DOCEX_CONFIG_YAML', `${file}: ${problems[0]}`, { details: { file, problems } });
  }
  const raw: unknown = doc.toJS() ?? {};

  const only = deps.secretsOnlyUnder;
  const substitution: SubstitutionDeps = {
    env: deps.env,
    readFile: (ref, at) => deps.readSecretFile(path.resolve(deps.baseDir, ref), at),
    ...(only ? { reads: (at: string) => only.some((prefix) => isUnder(at, prefix)) } : {}),
  };
  const { value, referenced } = substituteReferences(raw, substitution);

  const parsed = agentConfigSchema.safeParse(value, { error: configErrorText });
  if (!parsed.success) throw invalid(file, formatIssues(parsed.error.issues));

  const config = resolveConfigPaths(parsed.data, deps.baseDir);
  const conflicts = findPathConflicts(config);
  if (conflicts.length > 0)
    throw invalid(
      file,
      conflicts.map((c) => `${c.at}: ${c.message}`),
    );

  const warnings = secretPaths(parsed.data)
    .filter((at) => !referenced.has(at))
    .map((at) => `${at} is written inline; use \${env:NAME} or \${file:PATH} to keep it out of the file`);
  return { config, file, warnings };
}

/**
 * Reads a file that holds a secret. Refused when group or others may read it (as ssh does with
 * keys); the check is on the open descriptor so the file cannot be swapped in between.
 */
export function readSecretFile(file: string, at: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new DocexError('DOCEX_CONFIG_FILE', `${at}: cannot read ${file} (${reason})`, {
      cause: err,
      details: { at, file },
    });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new DocexError('DOCEX_CONFIG_FILE', `${at}: ${file} is not a file`, { details: { at, file } });
    }
    if (process.platform !== 'win32' && (stat.mode & 0o044) !== 0) {
      const mode = octalMode(stat.mode & 0o777);
      throw new DocexError(
        'DOCEX_CONFIG_SECRET_PERMISSIONS',
        `${at}: secret file ${file} is readable by group or others (mode ${mode}); run chmod 600 ${file}`,
        { details: { at, file, mode } },
      );
    }
    return readFileSync(fd, 'utf8').replace(/\r?\n$/, '');
  } finally {
    closeSync(fd);
  }
}

export interface LoadConfigOptions {
  /** Defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * For a command that does not call the service: the config paths whose secrets it uses
   * (`journal`, `returns.statuses.target`). Elsewhere no `${credential:}` is read, nor any
   * reference of a secret-named key (`clientSecret`, `apiKey`, `password`, …), nor an unset
   * `${env:CREDENTIALS_DIRECTORY}`: they are left as placeholders (`<unread credential:api-key>`),
   * never to be used. Without it (start, check, the service commands) every reference is read.
   */
  secretsOnlyUnder?: readonly string[];
}

/** Reads, substitutes and validates the configuration file. Throws DocexError DOCEX_CONFIG_*. */
export function loadConfig(configFile: string, options: LoadConfigOptions = {}): LoadedConfig {
  const file = path.resolve(configFile);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new DocexError('DOCEX_CONFIG_FILE', `cannot read the configuration ${file} (${reason})`, {
      cause: err,
      details: { file },
    });
  }
  return parseConfig(text, {
    baseDir: path.dirname(file),
    env: options.env ?? process.env,
    readSecretFile,
    file,
    ...(options.secretsOnlyUnder ? { secretsOnlyUnder: options.secretsOnlyUnder } : {}),
  });
}
