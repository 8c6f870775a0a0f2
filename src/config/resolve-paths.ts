/**
 * Relative paths in the configuration mean "relative to the configuration file", not to the
 * directory the agent happened to be started from. Pure: the base folder is passed in.
 */
import path from 'node:path';
import { kindOf } from '../sources/kinds.js';
import type { AgentConfig, FolderConfig } from './schema.js';
import { resolveSftpConnectionPaths, type SftpConnectionConfig } from './sftp-schema.js';

export interface PathConflict {
  /** Config path of the offending value, e.g. `folders[1].source.path`. */
  at: string;
  message: string;
}

function resolveFolder(folder: FolderConfig, base: string): FolderConfig {
  return {
    ...folder,
    source: kindOf(folder.source).resolvePaths(folder.source, base),
    archiveDir: path.resolve(base, folder.archiveDir),
    errorDir: path.resolve(base, folder.errorDir),
  };
}

/** The same configuration with every path field absolute. */
export function resolveConfigPaths(config: AgentConfig, baseDir: string): AgentConfig {
  const base = path.resolve(baseDir);
  const service = config.service && {
    ...config.service,
    tls: {
      caFile: path.resolve(base, config.service.tls.caFile),
      certFile: path.resolve(base, config.service.tls.certFile),
      keyFile: path.resolve(base, config.service.tls.keyFile),
    },
  };
  return {
    ...config,
    ...(service ? { service } : {}),
    stateDir: path.resolve(base, config.stateDir),
    journal: {
      ...config.journal,
      ...(config.journal.caFile ? { caFile: path.resolve(base, config.journal.caFile) } : {}),
      ...(config.journal.certFile ? { certFile: path.resolve(base, config.journal.certFile) } : {}),
      ...(config.journal.keyFile ? { keyFile: path.resolve(base, config.journal.keyFile) } : {}),
    },
    sandbox: { ...config.sandbox, stateDir: path.resolve(base, config.sandbox.stateDir) },
    folders: config.folders.map((folder) => resolveFolder(folder, base)),
    peppolInbox: { ...config.peppolInbox, target: resolveOutputTarget(config.peppolInbox.target, base) },
    returns: {
      ...config.returns,
      statuses: {
        ...config.returns.statuses,
        target: resolveOutputTarget(config.returns.statuses.target, base),
      },
      proofs: { ...config.returns.proofs, target: resolveOutputTarget(config.returns.proofs.target, base) },
    },
  };
}

/** A local output folder relative to the config file; a remote target's path is the server's (its key files are local). */
export function resolveOutputTarget<T extends { type: string; path: string }>(target: T, base: string): T {
  if (target.type === 'sftp') {
    return resolveSftpConnectionPaths(target as unknown as SftpConnectionConfig, base) as unknown as T;
  }
  return target.type === 'local' ? { ...target, path: path.resolve(base, target.path) } : target;
}

/**
 * Folders that would feed each other or share a source: two folders on one path, or a file
 * moved to an archive/error folder that another folder watches (it would be sent again).
 * Expects absolute paths (after resolveConfigPaths).
 */
export function findPathConflicts(config: AgentConfig): PathConflict[] {
  const conflicts: PathConflict[] = [];
  const sources = new Map<string, number>();
  config.folders.forEach((folder, i) => {
    const key = kindOf(folder.source).identity(folder.source);
    const seen = sources.get(key);
    if (seen !== undefined) {
      conflicts.push({ at: `folders[${i}].source.path`, message: `same folder as folders[${seen}]` });
    } else sources.set(key, i);
  });
  config.folders.forEach((folder, i) => {
    for (const key of ['archiveDir', 'errorDir'] as const) {
      const watched = sources.get(folder[key]);
      if (watched !== undefined) {
        conflicts.push({
          at: `folders[${i}].${key}`,
          message: `is the source folder of folders[${watched}]: its files would be sent again`,
        });
      }
    }
  });
  return conflicts;
}
