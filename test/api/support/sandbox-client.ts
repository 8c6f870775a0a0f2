import type { DocexClientOptions } from '../../../src/api/client.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';

/** Options of a DocexClient for a running sandbox's credentials, with quick retries for tests. */
export function sandboxClientOptions(
  sandbox: RunningSandbox,
  overrides: Partial<DocexClientOptions> = {},
): DocexClientOptions {
  const c = sandbox.credentials;
  return {
    apiUrl: sandbox.urls.api,
    authUrl: sandbox.urls.auth,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    apiKey: c.apiKey,
    tls: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem },
    retry: { baseDelayMs: 5, maxDelayMs: 2_000 },
    ...overrides,
  };
}
