import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient } from '../../src/api/client.js';
import { resolveFolderMode } from '../../src/config/folder-mode.js';
import { loadConfig } from '../../src/config/load.js';
import { redactedConfig } from '../../src/config/redact.js';
import { readTlsMaterial } from '../../src/config/tls-files.js';
import { silentLogger } from '../../src/core/logger.js';
import { type RunningSandbox, startSandbox } from '../../src/sandbox/index.js';
import { SEED } from '../../src/sandbox/seed-ids.js';

let dir: string;
let sandbox: RunningSandbox;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-config-sandbox-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'sandbox'), log: silentLogger() });
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the configuration fragment the sandbox writes', () => {
  it('loads with its file-referenced secrets and mTLS files and connects a real client over mTLS', async () => {
    const { config, warnings } = loadConfig(sandbox.paths.agentConfigFragment, { env: {} });
    expect(warnings).toEqual([]);
    const service = config.service;
    if (!service) throw new Error('the fragment has no service');
    expect(service.clientSecret).toBe(sandbox.credentials.clientSecret);
    expect(service.apiKey).toBe(sandbox.credentials.apiKey);
    const shown = JSON.stringify(redactedConfig(config));
    expect(shown).not.toContain(sandbox.credentials.clientSecret);
    expect(shown).not.toContain(sandbox.credentials.apiKey);

    const client = new DocexClient({
      apiUrl: service.apiUrl,
      authUrl: service.authUrl,
      clientId: service.clientId,
      clientSecret: service.clientSecret,
      apiKey: service.apiKey,
      tls: readTlsMaterial(service.tls),
      timeouts: service.timeouts,
    });
    try {
      // Needs the token (client secret), the x-api-key and the client certificate.
      const workflow = await client.workflows.get(SEED.workflows.payloadPdfPrint);
      expect(resolveFolderMode({ name: 'letters', workflowId: workflow.id }, workflow.inputSource.type)).toBe(
        'payload-pdf',
      );
    } finally {
      await client.close();
    }
  });
});
