/** What the service commands (webhooks, resend) take from tests: where output goes, how the client is made. */
import type { DocexClient, DocexClientOptions } from '../api/index.js';
import type { CliIo } from './output/cli-io.js';

export interface ServiceCliDeps {
  io?: CliIo;
  createClient?: (options: DocexClientOptions) => DocexClient;
}
