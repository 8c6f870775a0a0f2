import type { AdminClientOptions } from '../../../src/api/admin/index.js';
import type { DocexClientOptions } from '../../../src/api/client.js';
import { clientOptionsFromSandbox } from '../../../src/cli/builtin-sandbox.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';

/** Options of a DocexClient for a running sandbox's credentials, with quick retries for tests. */
export function sandboxClientOptions(
  sandbox: RunningSandbox,
  overrides: Partial<DocexClientOptions> = {},
): DocexClientOptions {
  return { ...clientOptionsFromSandbox(sandbox), retry: { baseDelayMs: 5, maxDelayMs: 2_000 }, ...overrides };
}

/** Options of an AdminClient for a running sandbox's Interface B: the CA only, no client certificate. */
export function sandboxAdminOptions(
  sandbox: RunningSandbox,
  overrides: Partial<AdminClientOptions> = {},
): AdminClientOptions {
  const c = sandbox.credentials;
  return {
    apiUrl: sandbox.urls.admin ?? '',
    authUrl: sandbox.urls.admin ?? '',
    clientId: c.admin.clientId,
    clientSecret: c.admin.clientSecret,
    apiKey: c.apiKey,
    ca: c.caCertPem,
    retry: { baseDelayMs: 5 },
    ...overrides,
  };
}
