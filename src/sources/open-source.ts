/**
 * Opens a running folder's source with its kind's factory: the one place a kind's I/O joins (its
 * definition, `kinds.ts`, is pure). The map is typed by the registry: a registered kind without a
 * factory does not compile.
 */
import type { FolderConfig } from '../config/index.js';
import type { FolderSource, SourceDeps } from './folder-source.js';
import type { SourceConfigOf, SourceType } from './kinds.js';
import { createLocalFolderSource } from './local/factory.js';
import { createSftpFolderSource } from './sftp/source-factory.js';

type SourceFactory<T extends SourceType> = (
  folder: FolderConfig & { source: SourceConfigOf<T> },
  deps: SourceDeps,
) => FolderSource;

export const SOURCE_FACTORIES: { readonly [T in SourceType]: SourceFactory<T> } = {
  local: createLocalFolderSource,
  sftp: createSftpFolderSource,
};

export function openFolderSource(folder: FolderConfig, deps: SourceDeps): FolderSource {
  // The factory of the folder's own kind: it takes only that kind's sources.
  const create = SOURCE_FACTORIES[folder.source.type] as SourceFactory<SourceType>;
  return create(folder, deps);
}
