/**
 * /readyz: is the agent able to do its work now? Each check answers ok or a short reason; the
 * checks run side by side, each within a time limit. Pure where it can be: the upload-window rule
 * takes plain values, the others take their I/O as functions.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';
import { isApiError } from '../api/errors.js';
import { isOutageStatus } from '../api/reachability.js';
import type { Clock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import {
  describeLocation,
  type JournalLocation,
  journalFiles,
  type PendingUpload,
} from '../journal/index.js';
import { type UnreadableFile, unreadableLine } from '../sources/local/index.js';

export interface CheckResult {
  ok: boolean;
  detail?: string;
}

export interface ReadinessCheck {
  name: string;
  run(signal: AbortSignal): Promise<CheckResult>;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult & { ms: number }>;
}

/** Share of an upload window after which the agent says it is not ready (the 90%). */
export const UPLOAD_WINDOW_ALARM = 0.9;

const DEFAULT_CHECK_TIMEOUT_MS = 5_000;

/** A failure as one line without secrets: our errors carry a code and a redacted message. */
export function reason(err: unknown): string {
  if (isDocexError(err)) return `${err.code}: ${err.message}`;
  const code = (err as { code?: unknown })?.code;
  const message = err instanceof Error ? err.message : String(err);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

export async function runChecks(
  checks: readonly ReadinessCheck[],
  timeoutMs = DEFAULT_CHECK_TIMEOUT_MS,
): Promise<ReadinessReport> {
  const entries = await Promise.all(
    checks.map(async (check) => {
      const started = performance.now();
      const signal = AbortSignal.timeout(timeoutMs);
      let result: CheckResult;
      try {
        result = await Promise.race([
          check.run(signal),
          new Promise<CheckResult>((resolve) =>
            signal.addEventListener('abort', () =>
              resolve({ ok: false, detail: `no answer within ${timeoutMs} ms` }),
            ),
          ),
        ]);
      } catch (err) {
        result = { ok: false, detail: reason(err) };
      }
      return [check.name, { ...result, ms: Math.round(performance.now() - started) }] as const;
    }),
  );
  return { ready: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
}

/** The pending uploads past `alarm` of their window (created → deadline) at `now`. */
export function lateUploads(pending: readonly PendingUpload[], now: number, alarm = UPLOAD_WINDOW_ALARM) {
  return pending.filter((p) => {
    const window = p.deadline - p.openedAt;
    return window <= 0 ? now >= p.deadline : (now - p.openedAt) / window >= alarm;
  });
}

export function uploadWindowCheck(pending: () => Promise<PendingUpload[]>, clock: Clock): ReadinessCheck {
  return {
    name: 'uploadWindows',
    run: async () => {
      const all = await pending();
      const late = lateUploads(all, clock.now());
      if (late.length === 0) return { ok: true, detail: `${all.length} pending` };
      const first = late[0]!;
      const holder = first.owner === undefined ? '' : ` (held by agent ${first.owner})`;
      return {
        ok: false,
        detail: `${late.length} upload(s) past ${UPLOAD_WINDOW_ALARM * 100}% of their window, e.g. ${first.folder}/${first.fileName}${holder}`,
      };
    },
  };
}

export interface FolderDirs {
  name: string;
  dirs: string[];
}

/** Each running folder's drop, `.processing`, archive and error directories readable and writable. */
export function foldersCheck(folders: () => FolderDirs[]): ReadinessCheck {
  return {
    name: 'folders',
    run: async () => {
      const list = folders();
      const problems: string[] = [];
      for (const folder of list) {
        for (const dir of folder.dirs) {
          try {
            await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
          } catch (err) {
            const code = (err as NodeJS.ErrnoException).code ?? 'unusable';
            problems.push(`${folder.name}: ${dir} (${code})`);
          }
        }
      }
      return problems.length === 0
        ? { ok: true, detail: `${list.length} folder(s)` }
        : { ok: false, detail: problems.join('; ') };
    },
  };
}

/** The journal file, its WAL and its directory writable (SQLite needs all three). */
/**
 * The journal answers a read; a SQLite journal's file and folder are writable too. Not ready names
 * where the journal is (a PostgreSQL URL without its password).
 */
export function journalCheck(location: JournalLocation, ping: () => Promise<unknown>): ReadinessCheck {
  return {
    name: 'journal',
    run: async () => {
      try {
        await ping();
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        return { ok: false, detail: `journal ${describeLocation(location)} not answering: ${reason}` };
      }
      const [file] = journalFiles(location);
      if (file === undefined) return { ok: true };
      for (const target of [path.dirname(file), file]) {
        try {
          await access(target, constants.W_OK);
        } catch (err) {
          return { ok: false, detail: `${target} not writable (${(err as NodeJS.ErrnoException).code})` };
        }
      }
      return { ok: true };
    },
  };
}

/** A token can be had (the cached one, or a fresh one from the token host). */
export function tokenCheck(getToken: (signal: AbortSignal) => Promise<unknown>): ReadinessCheck {
  return {
    name: 'token',
    run: async (signal) => {
      await getToken(signal);
      return { ok: true };
    },
  };
}

/** The API answers a cheap authenticated GET (mTLS, API key and token all accepted). */
export function apiCheck(ping: (signal: AbortSignal) => Promise<unknown>): ReadinessCheck {
  return {
    name: 'api',
    run: async (signal) => {
      await ping(signal);
      return { ok: true };
    },
  };
}

/** A folder the agent did not start (an unknown workflow id, a managed company it may not use). */
export interface StoppedFolderView {
  name: string;
  code: string;
  reason: string;
}

/** Not ready while any configured folder is stopped: its files are not being taken. */
export function stoppedFoldersCheck(stopped: () => StoppedFolderView[]): ReadinessCheck {
  return {
    name: 'stoppedFolders',
    run: async () => {
      const list = stopped();
      if (list.length === 0) return { ok: true };
      return { ok: false, detail: list.map((f) => `${f.name}: ${f.code}: ${f.reason}`).join('; ') };
    },
  };
}

/** Files named in the /readyz detail at most; the rest are counted. */
const UNREADABLE_NAMED = 5;

/**
 * Files the agent cannot read, stat or move (the ERP's umask or group): always ok, with the files
 * and the fix in its detail. Ready all the same: every other file is taken, and an orchestrator or a
 * failover acting on "not ready" would not help (another agent, or this one restarted, cannot read
 * them either); docex_files_unreadable and its alert call the operator, the detail says what to fix.
 */
export function unreadableFilesCheck(files: () => UnreadableFile[]): ReadinessCheck {
  return {
    name: 'unreadableFiles',
    run: async () => {
      const list = files();
      if (list.length === 0) return { ok: true };
      const named = list.slice(0, UNREADABLE_NAMED).map(unreadableLine);
      const more = list.length > UNREADABLE_NAMED ? [`and ${list.length - UNREADABLE_NAMED} more`] : [];
      return {
        ok: true,
        detail: `${list.length} file(s) the agent cannot read, stat or move wait untouched: ${[...named, ...more].join('; ')}. Fix: ${list[0]!.fix}`,
      };
    },
  };
}

/** A folder's files held until its send window opens, and when it opens (undefined: not within a year). */
export interface WindowHeldView {
  folder: string;
  files: number;
  opensAt?: number | undefined;
}

/**
 * Files held by a closed send window (`window`): always ok (a closed window is the configuration
 * working), with each such folder, its count and the opening in its detail, so /readyz says why
 * files wait; docex_files_held_for_window counts them.
 */
export function sendWindowsCheck(held: () => WindowHeldView[]): ReadinessCheck {
  return {
    name: 'sendWindows',
    run: async () => {
      const list = held().filter((f) => f.files > 0);
      if (list.length === 0) return { ok: true };
      const opening = (at: number | undefined) =>
        at === undefined ? 'it opens on none of the next 366 days' : `until ${new Date(at).toISOString()}`;
      return {
        ok: true,
        detail: list
          .map((f) => `${f.folder}: ${f.files} file(s) held by its closed send window, ${opening(f.opensAt)}`)
          .join('; '),
      };
    },
  };
}

/** An output whose last write failed, with since when and why. */
export interface FailingOutputView {
  output: string;
  description: string;
  since: number;
  reason: string;
}

/** Not ready while the last write to any output target (statuses, proofs, Peppol inbox) failed. */
export function outputsCheck(failing: () => FailingOutputView[], clock: Clock): ReadinessCheck {
  return {
    name: 'outputs',
    run: async () => {
      const list = failing();
      if (list.length === 0) return { ok: true };
      const now = clock.now();
      return {
        ok: false,
        detail: list
          .map(
            (o) =>
              `${o.output} (${o.description}) not written for ${Math.round((now - o.since) / 1000)} s: ${o.reason}`,
          )
          .join('; '),
      };
    },
  };
}

/** No answer, or an answer that says the service cannot serve now: an outage, not a setup error. */
export function isOutageError(err: unknown): boolean {
  if (!isApiError(err)) return false;
  if (err.status !== undefined) return isOutageStatus(err.status);
  return err.code === 'DOCEX_NETWORK' || err.code === 'DOCEX_AUTH_TOKEN';
}

export interface Unreachability {
  /** Milliseconds the service has failed every call (0 while it answers). */
  forMs(): number;
  /** How long an outage is tolerated before the agent is not ready. */
  thresholdMs: number;
}

/**
 * A service check that tolerates a short outage: a refused connection, a timeout or a 503 fails
 * it only once the service has been unreachable for `thresholdMs` (files and jobs wait meanwhile,
 * nothing is lost). Setup errors (TLS, 401, 403) fail it at once.
 */
export function toleratingOutage(check: ReadinessCheck, unreachable: Unreachability): ReadinessCheck {
  return {
    name: check.name,
    run: async (signal) => {
      let failure: unknown;
      try {
        const result = await check.run(signal);
        if (result.ok) return result;
        failure = new Error(result.detail ?? 'failed');
      } catch (err) {
        if (!isOutageError(err)) throw err;
        failure = err;
      }
      const forMs = unreachable.forMs();
      const detail = `service unreachable for ${Math.round(forMs / 1000)} s (limit ${Math.round(unreachable.thresholdMs / 1000)} s): ${reason(failure)}`;
      return { ok: forMs < unreachable.thresholdMs && isOutageError(failure), detail };
    },
  };
}
