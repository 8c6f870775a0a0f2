/**
 * Builds the source of one running SFTP folder from its configuration: the connection (its own
 * server handle: one control connection reused across polls plus the transfer pool). The pipeline's
 * part (its accept, which names are sidecars, the reason files written beside a rejected remote
 * file) comes in with the deps: sources do not know the pipeline.
 */

import type { FolderConfig } from '../../config/index.js';
import { endpointFromConfig } from '../../sftp/endpoint.js';
import { openSftpServer } from '../../sftp/server.js';
import type { SftpServer } from '../../sftp/types.js';
import type { FolderSource, SourceDeps } from '../folder-source.js';
import { type SftpSourceConfig, sftpFolderUrl } from './kind.js';
import { SftpSource } from './source.js';

export function createSftpFolderSource(
  folder: FolderConfig & { source: SftpSourceConfig },
  deps: SourceDeps,
): FolderSource {
  const { source } = folder;
  const { hooks } = deps;
  const pollIntervalMs = deps.timing?.sftpPollIntervalMs;
  const log = deps.log.child({ folder: folder.name });
  let server: SftpServer | undefined;
  let inner: SftpSource | undefined;
  let closing: Promise<void> | undefined;
  const stopIntake = async () => {
    await inner?.stop();
  };
  const close = () => {
    closing ??= (async () => {
      await inner?.stop();
      await inner?.settled();
      await server?.close();
    })();
    return closing;
  };

  return {
    async start() {
      const endpoint = endpointFromConfig(source, `folders.${folder.name}.source`);
      // Reconnect backoff runs on wall-clock time, not on the agent's clock (a test's ManualClock).
      const opened = openSftpServer(endpoint, { log });
      server = opened;
      inner = new SftpSource({
        folder: {
          name: folder.name,
          url: sftpFolderUrl(source),
          remotePath: source.path,
          include: folder.include,
          exclude: folder.exclude,
          stability: folder.stability,
          order: folder.order,
          maxFilesPerScan: folder.maxFilesPerScan,
          claim: source.claim,
          afterSuccess: source.afterSuccess,
          remoteArchiveDir: source.remoteArchiveDir,
          remoteErrorDir: source.remoteErrorDir,
          spoolDir: source.spoolDir,
          pollIntervalMs: pollIntervalMs ?? source.pollIntervalMs,
          // A configuration built without the schema (tests) has no `create`: off, as the default.
          create: folder.create === true,
          recursive: folder.recursive,
          ...(deps.at === undefined ? {} : { at: deps.at }),
        },
        server: opened,
        journal: deps.journal,
        ...(deps.sharedClaims ? { shared: deps.sharedClaims } : {}),
        clock: deps.clock,
        log,
        accept: (file, onLost) => hooks.accept(folder.name, file, onLost),
        ...(deps.onUnsafe ? { onUnsafe: deps.onUnsafe } : {}),
        isCompanion: (name) => hooks.isCompanion(name),
        companionsOf: (name) => hooks.companionsOf(name),
        errorFiles: (item, now) => hooks.errorFiles(item, now),
      });
      await inner.start();
    },
    async stop() {
      await stopIntake();
      await close();
    },
    stopIntake,
    close,
    pause: () => inner?.pause(),
    resume: () => inner?.resume(),
    tick: () => inner?.tick() ?? Promise.resolve(),
    finished(item) {
      // Before start (items recovered first): the first poll's reconciliation finishes them.
      void inner?.finished(item);
    },
    left(item) {
      void inner?.left(item);
    },
  };
}
