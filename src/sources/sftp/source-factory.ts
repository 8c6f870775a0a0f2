/**
 * Builds the source of one running SFTP folder from its configuration: the connection (its own
 * server handle: one control connection reused across polls plus the transfer pool). The pipeline's
 * part (its accept, which names are sidecars, the reason files written beside a rejected remote
 * file) comes in with the deps: sources do not know the pipeline.
 */

import type { FolderConfig } from '../../config/index.js';
import type { Clock } from '../../core/clock.js';
import type { DocexError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { JournalItem } from '../../journal/index.js';
import { endpointFromConfig } from '../../sftp/endpoint.js';
import { openSftpServer } from '../../sftp/server.js';
import type { OpenSftpServerOptions, SftpEndpoint, SftpServer } from '../../sftp/types.js';
import { sftpFolderUrl } from './kind.js';
import { SftpSource, type SftpSourceOptions, type SharedClaims, type SpoolFile } from './source.js';

export interface SftpSourceDeps {
  /** The pipeline's accept: false when it did not take the file; `onLost` when it failed before the item. */
  accept(folder: string, file: SpoolFile, onLost: (err: unknown) => void): boolean;
  /** Names that are not items of their own (payload-pdf sidecars): they travel with their data file. */
  isCompanion(name: string): boolean;
  companionsOf(name: string): string[];
  /** The reason files written beside a rejected file in the remote error folder. */
  errorFiles: SftpSourceOptions['errorFiles'];
  journal: SftpSourceOptions['journal'];
  /** Several agents share the journal: each claims into a folder of its own. */
  shared?: SharedClaims;
  clock: Clock;
  log: Logger;
  /** Tests: poll period instead of the folder's pollIntervalMs (0: only explicit ticks). */
  pollIntervalMs?: number;
  /** The folder's key in the configuration (`folders[2]`), named when its remote drop folder is missing. */
  at?: string;
  /** Tests inject a wrapped server. */
  openServer?: (endpoint: SftpEndpoint, options: OpenSftpServerOptions) => SftpServer;
  /** The spool proved not a real directory while running: the folder must stop. */
  onUnsafe?: (err: DocexError) => void;
}

/** What the agent holds: a FolderSource plus the pipeline's "item final" notification. */
export interface SftpFolderSource {
  start(): Promise<void>;
  /** stopIntake, then close. */
  stop(): Promise<void>;
  /** No more polls or downloads; items in the pipeline can still move their remote file. */
  stopIntake(): Promise<void>;
  /** Waits for remote finishes under way, then closes the connection (once the pipeline is idle). */
  close(): Promise<void>;
  pause(): void;
  resume(): void;
  tick(): Promise<void>;
  finished(item: JournalItem): void;
  left(item: JournalItem): void;
}

export function createSftpFolderSource(folder: FolderConfig, deps: SftpSourceDeps): SftpFolderSource {
  if (folder.source.type !== 'sftp') throw new Error(`folder ${folder.name} is not an SFTP folder`);
  const source = folder.source;
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
      const opened = (deps.openServer ?? openSftpServer)(endpoint, { log });
      server = opened;
      inner = new SftpSource({
        folder: {
          name: folder.name,
          url: sftpFolderUrl(source),
          remotePath: source.path,
          include: folder.include,
          exclude: folder.exclude,
          stability: folder.stability,
          claim: source.claim,
          afterSuccess: source.afterSuccess,
          remoteArchiveDir: source.remoteArchiveDir,
          remoteErrorDir: source.remoteErrorDir,
          spoolDir: source.spoolDir,
          pollIntervalMs: deps.pollIntervalMs ?? source.pollIntervalMs,
          // A configuration built without the schema (tests) has no `create`: off, as the default.
          create: folder.create === true,
          ...(deps.at === undefined ? {} : { at: deps.at }),
        },
        server: opened,
        journal: deps.journal,
        ...(deps.shared ? { shared: deps.shared } : {}),
        clock: deps.clock,
        log,
        accept: (file, onLost) => deps.accept(folder.name, file, onLost),
        ...(deps.onUnsafe ? { onUnsafe: deps.onUnsafe } : {}),
        isCompanion: deps.isCompanion,
        companionsOf: deps.companionsOf,
        errorFiles: deps.errorFiles,
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
