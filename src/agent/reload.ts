/**
 * SIGHUP: read the configuration file again and apply what can change without a restart, the
 * folders. Folders added start (workflow check, recovery, source), folders removed or disabled stop
 * taking files and finish what they hold, folders changed do both. A new configuration that does
 * not load (YAML, schema, a secret file) is refused and the running one stays. Other changes
 * (service, state folder, concurrency, log, ops) are named in a warning: they need a restart.
 */
import { type AgentConfig, type FolderConfig, type LoadedConfig, loadConfig } from '../config/index.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { FolderRuntime } from '../pipeline/types.js';
import { folderKey } from '../sources/drop-folder.js';
import { planFolders, type StoppedFolder, type WorkflowFetch } from './folders.js';

export interface FolderDiff {
  added: FolderConfig[];
  removed: string[];
  changed: FolderConfig[];
}

/** Enabled folders by name: which appeared, went (or were disabled), or differ in any setting. */
export function diffFolders(before: readonly FolderConfig[], after: readonly FolderConfig[]): FolderDiff {
  const old = new Map(before.filter((f) => f.enabled).map((f) => [f.name, f]));
  const next = new Map(after.filter((f) => f.enabled).map((f) => [f.name, f]));
  const diff: FolderDiff = { added: [], removed: [], changed: [] };
  for (const [name, folder] of next) {
    const was = old.get(name);
    if (!was) diff.added.push(folder);
    else if (JSON.stringify(was) !== JSON.stringify(folder)) diff.changed.push(folder);
  }
  for (const name of old.keys()) if (!next.has(name)) diff.removed.push(name);
  return diff;
}

/** Top-level settings other than the folders that differ: names only, values may be secrets. */
export function restartOnlyChanges(before: AgentConfig, after: AgentConfig): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  keys.delete('folders');
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}

/** What the reload acts on: an Agent fits. */
export interface ReloadTarget {
  readonly plan: { running: Map<string, FolderRuntime>; stopped: StoppedFolder[] };
  /** `at`: the folder's key in the configuration read (`folders[2]`), for the errors that name it. */
  addFolder(runtime: FolderRuntime, at: string): Promise<void>;
  removeFolder(name: string): Promise<void>;
}

export interface ReloadOptions {
  configFile: string;
  /** The configuration running now. */
  config: AgentConfig;
  target: ReloadTarget;
  fetchWorkflow: WorkflowFetch;
  log: Logger;
  /** Reads the file (default loadConfig). */
  load?: (file: string) => LoadedConfig;
}

export type ReloadResult =
  | { applied: false; code: string; problems: string[] }
  | {
      applied: true;
      added: string[];
      removed: string[];
      changed: string[];
      stopped: StoppedFolder[];
      restartNeeded: string[];
    };

/** Reloads on demand, one at a time (a second SIGHUP during a reload runs after it). */
export class ConfigReloader {
  private config: AgentConfig;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ReloadOptions) {
    this.config = options.config;
  }

  /** The configuration in force (the last one applied). */
  get current(): AgentConfig {
    return this.config;
  }

  reload(): Promise<ReloadResult> {
    const run = this.chain.then(() => this.reloadNow());
    this.chain = run.catch(() => {});
    return run;
  }

  private async reloadNow(): Promise<ReloadResult> {
    const { configFile, target, log } = this.options;
    let loaded: LoadedConfig;
    try {
      loaded = (this.options.load ?? loadConfig)(configFile);
    } catch (err) {
      const code = isDocexError(err) ? err.code : 'DOCEX_CONFIG_INVALID';
      const details = isDocexError(err) ? (err.details as { problems?: unknown } | undefined) : undefined;
      const problems = Array.isArray(details?.problems)
        ? details.problems.map(String)
        : [err instanceof Error ? err.message : String(err)];
      log.error(
        { config: configFile, code, problems },
        'configuration reload refused; the running configuration stays',
      );
      return { applied: false, code, problems };
    }
    const next = loaded.config;
    for (const warning of loaded.warnings) log.warn({ config: loaded.file }, warning);
    const diff = diffFolders(this.config.folders, next.folders);
    // Folders stopped by their workflow check are checked again: the fix may be on the service side.
    const retry = target.plan.stopped
      .map((s) => next.folders.find((f) => f.enabled && f.name === s.name))
      .filter((f): f is FolderConfig => f !== undefined)
      .filter((f) => !diff.added.includes(f) && !diff.changed.includes(f));
    const toStart = [...diff.added, ...diff.changed, ...retry];
    log.info(
      {
        config: loaded.file,
        added: diff.added.map((f) => f.name),
        removed: diff.removed,
        changed: diff.changed.map((f) => f.name),
        recheck: retry.map((f) => f.name),
      },
      'configuration reload',
    );
    const plan = await planFolders(toStart, this.options.fetchWorkflow, log);
    // A folder's old source finishes its files before a new one on the same place starts (a
    // changed folder, or a folder renamed: two sources must never share a drop folder).
    const placeOf = (f: FolderConfig) => {
      const src = f.source as { type: string; path?: string; host?: string };
      return `${src.type}:${src.host ?? ''}:${src.path ?? ''}`;
    };
    const leaving = [...diff.removed, ...diff.changed.map((f) => f.name)].filter((name) =>
      target.plan.running.has(name),
    );
    const places = new Map(leaving.map((name) => [name, placeOf(target.plan.running.get(name)!.config)]));
    const stopping = new Map(leaving.map((name) => [name, target.removeFolder(name)] as const));
    const stoppingAt = (place: string) =>
      [...stopping].filter(([name]) => places.get(name) === place).map(([, done]) => done);
    const starts = toStart.map(async (folder) => {
      await Promise.allSettled([stopping.get(folder.name), ...stoppingAt(placeOf(folder))]);
      const runtime = plan.running.get(folder.name);
      if (runtime) await target.addFolder(runtime, folderKey(next.folders, folder.name));
    });
    const outcomes = await Promise.allSettled([...stopping.values(), ...starts]);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') log.error({ err: outcome.reason }, 'folder reload step failed');
    }
    const stoppedNames = new Set([...diff.removed, ...plan.stopped.map((s) => s.name)]);
    target.plan.stopped = [...target.plan.stopped.filter((s) => !stoppedNames.has(s.name)), ...plan.stopped];
    const restartNeeded = restartOnlyChanges(this.config, next);
    if (restartNeeded.length > 0) {
      log.warn({ settings: restartNeeded }, 'these settings changed and take effect at the next restart');
    }
    // The folders are what this process now runs; everything else stays as it started.
    this.config = { ...this.config, folders: next.folders };
    const result: ReloadResult = {
      applied: true,
      added: diff.added.map((f) => f.name),
      removed: diff.removed,
      changed: diff.changed.map((f) => f.name),
      stopped: plan.stopped,
      restartNeeded,
    };
    log.info(
      { folders: [...target.plan.running.keys()], stopped: target.plan.stopped.map((s) => s.name) },
      'configuration reloaded',
    );
    return result;
  }
}
