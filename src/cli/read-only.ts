/**
 * The commands that do not call the service, and the config paths whose secrets each uses: they
 * load the configuration with `secretsOnlyUnder` (config/load.ts), so the service's credentials
 * (`${credential:…}`, `clientSecret`, `apiKey`, an unset `${env:CREDENTIALS_DIRECTORY}`) are not
 * read and the commands run outside systemd, by hand. A PostgreSQL journal's password (and an SFTP
 * statuses target's, for `report`) is still read: those commands use it.
 */
export const READ_ONLY_SECRETS = {
  status: ['journal'],
  report: ['journal', 'returns.statuses.target'],
  agents: ['journal'],
  'journal copy': ['journal'],
  'returns retry': ['journal'],
  'credentials check': ['service.tls'],
} as const satisfies Record<string, readonly string[]>;
