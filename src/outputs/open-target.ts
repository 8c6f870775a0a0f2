/** An output target from its configuration: a local folder or a folder on an SFTP server. */
import type { OutputTargetConfig } from '../config/output-schema.js';
import type { Logger } from '../core/logger.js';
import { endpointFromConfig } from '../sftp/endpoint.js';
import { openSftpServer } from '../sftp/server.js';
import type { OutputHealth } from './health.js';
import { LocalTarget } from './local-target.js';
import { SftpTarget } from './sftp-target.js';
import type { OutputTarget, SharedWriting } from './types.js';

export interface OpenTargetOptions {
  log: Logger;
  /** Config place for error messages (`returns.proofs.target`). */
  at?: string;
  /** Told of every write's outcome (readiness, metrics). */
  health?: OutputHealth;
  /**
   * Other agents may write this folder at once (a shared journal): this agent's temp names and the
   * dead agents' (SharedWriting). Otherwise an SFTP temp name is the same for every write of a
   * target, so a crash's leftover is overwritten by the next write (a local folder sweeps its
   * leftovers at start; a shared one only its own and old ones, never another agent's write in
   * flight).
   */
  shared?: SharedWriting | undefined;
}

/**
 * Opens nothing remote yet (the first write connects); reads an SFTP private key now, so a key
 * file with loose permissions is refused at start-up (DOCEX_CONFIG_SECRET_PERMISSIONS).
 */
export function openOutputTarget(config: OutputTargetConfig, options: OpenTargetOptions): OutputTarget {
  const target = openTarget(config, options);
  return options.health ? options.health.watch(options.at ?? 'target', target) : target;
}

function openTarget(config: OutputTargetConfig, options: OpenTargetOptions): OutputTarget {
  if (config.type === 'local')
    return new LocalTarget(config.path, {
      log: options.log,
      ...(options.at ? { at: options.at } : {}),
      ...(options.shared
        ? { shared: true, writer: options.shared.writer, deadWriters: options.shared.deadWriters }
        : {}),
    });
  const server = openSftpServer(endpointFromConfig(config, options.at ?? 'target'), {
    log: options.log,
    transfers: 1,
  });
  return new SftpTarget(server, {
    root: config.path,
    staging: config.staging,
    log: options.log,
    ...(options.shared ? { writer: options.shared.writer, deadWriters: options.shared.deadWriters } : {}),
  });
}
