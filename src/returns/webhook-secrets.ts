/**
 * Webhook signing secrets kept in the state folder: `<stateDir>/webhook-secrets/<subscriptionId>.secret`
 * (mode 0600, folder 0700), written by `docex-agent webhooks create|reset-secret`. A reset keeps the
 * replaced secret as `<id>.previous.secret`, so deliveries signed just before the reset still pass
 * (for a day). The receiver reads the folder again whenever a secret file changes: a new secret
 * works without a restart.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import type { Webhook } from 'standardwebhooks';
import { readSecretFile } from '../config/load.js';
import { DocexError, isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { sanitizePart } from './peppol-names.js';
import { signerFor } from './webhook-verify.js';

export const WEBHOOK_SECRETS_DIR = 'webhook-secrets';
const CURRENT = '.secret';
const PREVIOUS = '.previous.secret';

export function webhookSecretsDir(stateDir: string): string {
  return path.join(stateDir, WEBHOOK_SECRETS_DIR);
}

function secretFile(dir: string, subscriptionId: string, suffix: string): string {
  return path.join(dir, `${sanitizePart(subscriptionId)}${suffix}`);
}

function writeSecretAtomic(file: string, secret: string): void {
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, `${secret}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
}

/**
 * Stores the secret of a subscription; the one it replaces (a reset) becomes the previous one.
 * Answers the file written. Refuses a value that is not a `whsec_` secret.
 */
export function storeWebhookSecret(stateDir: string, subscriptionId: string, secret: string): string {
  if (!signerFor(secret)) {
    throw new DocexError(
      'DOCEX_WEBHOOK_SECRET',
      `the secret of ${subscriptionId} is not a whsec_ base64 secret`,
    );
  }
  const dir = webhookSecretsDir(stateDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = secretFile(dir, subscriptionId, CURRENT);
  const previous = secretFile(dir, subscriptionId, PREVIOUS);
  try {
    renameSync(file, previous);
    // Its mtime now says when it was replaced: the receiver accepts it for a day after that.
    const now = new Date();
    utimesSync(previous, now, now);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeSecretAtomic(file, secret);
  return file;
}

/** Forgets both secrets of a deleted subscription. */
export function removeWebhookSecrets(stateDir: string, subscriptionId: string): void {
  const dir = webhookSecretsDir(stateDir);
  for (const suffix of [CURRENT, PREVIOUS]) rmSync(secretFile(dir, subscriptionId, suffix), { force: true });
}

/** How long a replaced secret is still accepted after a reset (from its file's mtime, set at the reset). */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;
/** At most one extra read of the folder per this long, after a signature that matched no secret. */
const MISMATCH_RELOAD_MS = 1000;

type Loaded = { signer: Webhook; until?: number };

/**
 * The secrets the receiver accepts: configured ones plus the state folder's, reloaded on change.
 * The change check is the sorted names with inode, size and mtime of every file (a folder's mtime
 * alone misses a create and rename within one tick). Time is wall time: it is compared with mtimes.
 */
export class SecretRing {
  private loaded: Loaded[] = [];
  private loadedKey: string | undefined = '\0never';
  private lastMismatchReload = Number.NEGATIVE_INFINITY;
  private readonly configured: Webhook[];

  constructor(
    private readonly dir: string,
    configured: readonly string[],
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.configured = [];
    configured.forEach((secret, i) => {
      const signer = signerFor(secret);
      if (signer) this.configured.push(signer);
      else log.error({ index: i }, 'webhooks.secrets entry is not a whsec_ base64 secret; ignored');
    });
  }

  /** The signers to try; a listing of the folder per call, a re-read only when a file changed. */
  current(): Webhook[] {
    const key = this.folderKey();
    if (key !== this.loadedKey) {
      this.loaded = key === undefined ? [] : this.load();
      this.loadedKey = key;
    }
    const now = this.now();
    const live = this.loaded.filter((l) => l.until === undefined || now < l.until).map((l) => l.signer);
    return [...this.configured, ...live];
  }

  /**
   * A signature matched none of `current()`: reads the folder again whatever the check says (a
   * secret written in a way the check cannot see), at most once a second. Answers the fresh
   * signers, or undefined when nothing was read again.
   */
  reloadAfterMismatch(): Webhook[] | undefined {
    const at = this.now();
    if (at - this.lastMismatchReload < MISMATCH_RELOAD_MS) return undefined;
    this.lastMismatchReload = at;
    this.loadedKey = '\0stale';
    return this.current();
  }

  /** Sorted names with inode, size and mtime of the secret files; undefined without the folder. */
  private folderKey(): string | undefined {
    let names: string[];
    try {
      names = readdirSync(this.dir).filter((f) => f.endsWith(CURRENT));
    } catch {
      return undefined;
    }
    return names
      .sort()
      .map((name) => {
        try {
          const st = statSync(path.join(this.dir, name));
          return `${name}:${st.ino}:${st.size}:${st.mtimeMs}`;
        } catch {
          return `${name}:gone`;
        }
      })
      .join('/');
  }

  private load(): Loaded[] {
    const loaded: Loaded[] = [];
    let files: string[];
    try {
      files = readdirSync(this.dir).filter((f) => f.endsWith(CURRENT));
    } catch {
      return [];
    }
    for (const name of files.sort()) {
      const file = path.join(this.dir, name);
      try {
        // A replaced secret only bridges the reset: accepted for a day after it, then ignored.
        const until = name.endsWith(PREVIOUS) ? statSync(file).mtimeMs + PREVIOUS_SECRET_TTL_MS : undefined;
        if (until !== undefined && until <= this.now()) continue;
        const signer = signerFor(readSecretFile(file, 'webhook secret'));
        if (signer) loaded.push(until === undefined ? { signer } : { signer, until });
        else this.log.error({ file }, 'webhook secret file does not hold a whsec_ secret; ignored');
      } catch (err) {
        // Permissions too open, or removed in between: skip it, say why (never its content).
        this.log.error(
          { file, code: isDocexError(err) ? err.code : undefined },
          'webhook secret file refused',
        );
      }
    }
    this.log.info({ secrets: loaded.length + this.configured.length }, 'webhook secrets loaded');
    return loaded;
  }
}
