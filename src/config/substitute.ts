/**
 * `${env:NAME}`, `${file:PATH}` and `${credential:NAME}` (a systemd credential: the file NAME in
 * $CREDENTIALS_DIRECTORY, see LoadCredential=) in text values of the parsed YAML, so secrets stay
 * out of the file. Pure: the environment and the file reader are passed in. Errors name the config
 * path and the variable, credential or file, never a value.
 *
 * A command that does not call the service (status, report, …) reads only the secrets of the
 * config paths it uses (`reads`): elsewhere a credential, a secret-named key's reference and an
 * unset `${env:CREDENTIALS_DIRECTORY}` are left unread, their text a placeholder that holds no
 * value, so such a command runs without the service's credentials (outside systemd, by hand).
 */
import path from 'node:path';
import { DocexError } from '../core/errors.js';
import { SECRET_CONFIG_KEYS } from '../core/log-redact.js';

export interface SubstitutionDeps {
  env: Readonly<Record<string, string | undefined>>;
  /** Content of a referenced file; throws DocexError (DOCEX_CONFIG_FILE, …) when it cannot. */
  readFile(ref: string, at: string): string;
  /** Whether the secrets of this config path are read (default: all are). */
  reads?(at: string): boolean;
}

export interface SubstitutionResult {
  value: unknown;
  /** Config paths (`service.apiKey`) whose value used a reference: the others were written inline. */
  referenced: Set<string>;
}

/** The stand-in of a reference left unread: names it, holds no value. */
const unreadReference = (kind: string, arg: string) => `<unread ${kind}:${arg}>`;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// systemd credential names are file names: no `/`, and `.`/`..` are not names.
const CREDENTIAL_NAME = /^(?!\.\.?$)[A-Za-z0-9_.@:-]+$/;
// `$${` is an escaped `${`; `${kind:arg}` a reference.
const TOKEN = /\$\$\{|\$\{([^}]*)\}/g;

/** `folders[1].source.path` from a list of keys and indexes. */
export function formatConfigPath(parts: readonly PropertyKey[]): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

/** `${credential:NAME}`: `$CREDENTIALS_DIRECTORY/NAME`, read with the secret-file permission rule. */
function readCredential(name: string, at: string, deps: SubstitutionDeps): string {
  if (!CREDENTIAL_NAME.test(name)) {
    throw new DocexError('DOCEX_CONFIG_CREDENTIAL', `${at}: "${name}" is not a credential name`, {
      details: { at },
    });
  }
  const dir = deps.env['CREDENTIALS_DIRECTORY'];
  if (!dir) {
    throw new DocexError(
      'DOCEX_CONFIG_CREDENTIAL',
      `${at}: credential ${name} asked for, but CREDENTIALS_DIRECTORY is not set (systemd sets it for LoadCredential=${name}:/path/to/file; in a container or by hand, set it to the folder holding ${name})`,
      { details: { at, name } },
    );
  }
  try {
    return deps.readFile(path.join(dir, name), at);
  } catch (err) {
    if (err instanceof DocexError && err.code === 'DOCEX_CONFIG_FILE') {
      throw new DocexError(
        'DOCEX_CONFIG_CREDENTIAL',
        `${at}: credential ${name} not found in ${dir} (add LoadCredential=${name}:/path/to/file to the unit, or put the file ${name} in that folder)`,
        { cause: err, details: { at, name } },
      );
    }
    throw err;
  }
}

/** Whether a reference is left unread where its secrets are not: see the file's comment. */
function leftUnread(kind: string, arg: string, secretKey: boolean, deps: SubstitutionDeps): boolean {
  if (kind === 'credential' || (secretKey && ['env', 'file'].includes(kind))) return true;
  return kind === 'env' && arg === 'CREDENTIALS_DIRECTORY' && deps.env[arg] === undefined;
}

function substituteText(
  text: string,
  at: string,
  deps: SubstitutionDeps,
  secretKey: boolean,
): { text: string; used: boolean } {
  let used = false;
  const readsHere = deps.reads?.(at) ?? true;
  const out = text.replace(TOKEN, (token, inner: string | undefined) => {
    if (token === '$${') return '${';
    used = true;
    const colon = (inner ?? '').indexOf(':');
    const kind = colon < 0 ? '' : (inner ?? '').slice(0, colon);
    const arg = colon < 0 ? '' : (inner ?? '').slice(colon + 1).trim();
    if (!readsHere && leftUnread(kind, arg, secretKey, deps)) {
      return unreadReference(kind, arg);
    }
    if (kind === 'env') {
      if (!ENV_NAME.test(arg)) {
        throw new DocexError('DOCEX_CONFIG_ENV', `${at}: "${arg}" is not an environment variable name`, {
          details: { at },
        });
      }
      const value = deps.env[arg];
      if (value === undefined) {
        throw new DocexError('DOCEX_CONFIG_ENV', `${at}: environment variable ${arg} is not set`, {
          details: { at, name: arg },
        });
      }
      return value;
    }
    if (kind === 'file') {
      if (arg === '')
        throw new DocexError('DOCEX_CONFIG_FILE', `${at}: \${file:} names no file`, { details: { at } });
      return deps.readFile(arg, at);
    }
    if (kind === 'credential') return readCredential(arg, at, deps);
    throw new DocexError(
      'DOCEX_CONFIG_INVALID',
      `${at}: unknown reference \${${inner ?? ''}}; use \${env:NAME}, \${file:PATH} or \${credential:NAME} (write $\${ for a literal \${)`,
      { details: { at } },
    );
  });
  return { text: out, used };
}

/** Replaces references in every text value (keys are left alone); one pass, so values are never re-read. */
export function substituteReferences(value: unknown, deps: SubstitutionDeps): SubstitutionResult {
  const referenced = new Set<string>();
  const walk = (node: unknown, parts: PropertyKey[]): unknown => {
    if (typeof node === 'string') {
      const at = formatConfigPath(parts);
      const key = parts.at(-1);
      const secretKey = typeof key === 'string' && SECRET_CONFIG_KEYS.has(key);
      const { text, used } = substituteText(node, at, deps, secretKey);
      if (used) referenced.add(at);
      return text;
    }
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...parts, i]));
    if (node !== null && typeof node === 'object') {
      // fromEntries defines own properties: a `__proto__` key stays a key (and is refused later).
      return Object.fromEntries(
        Object.entries(node).map(([key, child]) => [key, walk(child, [...parts, key])]),
      );
    }
    return node;
  };
  return { value: walk(value, []), referenced };
}
