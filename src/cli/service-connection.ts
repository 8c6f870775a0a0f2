/**
 * The service connection of a config file (the agent's, or the fragment the sandbox writes),
 * read through the config module so `${env:}`/`${file:}` references and permission checks are the
 * same everywhere.
 */
import { clientOptionsFromService } from '../agent/connection.js';
import type { AdminClientOptions } from '../api/admin/index.js';
import { loadConfig } from '../config/index.js';
import { DocexError } from '../core/errors.js';

/** The client options of the file's `service` block (Interface A), and its Interface B block. */
export interface ServiceConnection extends ReturnType<typeof clientOptionsFromService> {
  /** Interface B, when the file has a `service.admin` block. */
  admin?:
    | { apiUrl: string; authUrl: string; clientId: string; clientSecret: string; apiKey: string }
    | undefined;
}

export function loadServiceConnection(file: string): ServiceConnection {
  const { service } = loadConfig(file).config;
  if (!service) {
    throw new DocexError(
      'DOCEX_CONFIG_INVALID',
      `${file}: service (the connection to the service) is missing`,
    );
  }
  return { ...clientOptionsFromService(service), admin: service.admin };
}

/** The AdminClient options of a connection; DOCEX_CONFIG_INVALID when it has no admin block. */
export function adminClientOptions(connection: ServiceConnection, file: string): AdminClientOptions {
  if (!connection.admin) {
    throw new DocexError(
      'DOCEX_CONFIG_INVALID',
      `${file}: service.admin (Interface B connection) is missing`,
    );
  }
  return { ...connection.admin, ca: connection.tls.ca };
}
