import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { configJsonSchema, renderExampleYaml, renderJsonSchema } from '../../src/config/generate.js';
import { loadConfig } from '../../src/config/load.js';
import { SEED } from '../../src/sandbox/seed-ids.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const configDir = path.join(root, 'config');
const REGENERATE = 'out of date: run `npx tsx src/config/generate-cli.ts`';

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'docex-config-gen-'));
});
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface Node {
  description?: string;
  properties?: Record<string, Node>;
  items?: Node;
  oneOf?: Node[];
}

/** Config paths of options without a description (they would be undocumented in the example). */
function undocumented(node: Node, at: string): string[] {
  const own = Object.entries(node.properties ?? {}).flatMap(([key, prop]) => {
    const here = at ? `${at}.${key}` : key;
    // A discriminator (kind/type) is explained by its variant's description.
    const explained = prop.description !== undefined || 'const' in prop;
    return [...(explained ? [] : [here]), ...undocumented(prop, here)];
  });
  const items = node.items ? undocumented(node.items, `${at}[]`) : [];
  const variants = (node.oneOf ?? []).flatMap((v) => [
    ...(v.description ? [] : [`${at} (variant)`]),
    ...undocumented(v, at),
  ]);
  return [...own, ...items, ...variants];
}

describe('generated configuration documents', () => {
  it('config/agent.schema.json is what the schema generates', () => {
    expect(readFileSync(path.join(configDir, 'agent.schema.json'), 'utf8'), REGENERATE).toBe(
      renderJsonSchema(),
    );
  });

  it('config/agent.example.yaml is what the schema generates', () => {
    expect(readFileSync(path.join(configDir, 'agent.example.yaml'), 'utf8'), REGENERATE).toBe(
      renderExampleYaml(),
    );
  });

  it('documents every option', () => {
    expect(undocumented(configJsonSchema() as Node, '')).toEqual([]);
  });

  it('agent.schema.json itself (what an editor checks) accepts the example, sandbox.yaml and multi-company.yaml as written', () => {
    const fromJson = z.fromJSONSchema(
      JSON.parse(readFileSync(path.join(configDir, 'agent.schema.json'), 'utf8')),
    );
    for (const name of ['agent.example.yaml', 'sandbox.yaml', 'multi-company.yaml']) {
      const written = parse(readFileSync(path.join(configDir, name), 'utf8'));
      expect(fromJson.safeParse(written).error?.issues, name).toBeUndefined();
    }
    const typo = {
      sandbox: { enabled: true },
      folders: [{ name: 'a', source: { type: 'local', path: 'a' }, workflowId: 'w', stabilty: {} }],
    };
    expect(fromJson.safeParse(typo).success).toBe(false);
  });

  it('the example loads and validates, with its defaults written out', () => {
    const file = path.join(tmp, 'example', 'agent.yaml');
    mkdirSync(path.join(tmp, 'example', 'secrets'), { recursive: true });
    copyFileSync(path.join(configDir, 'agent.example.yaml'), file);
    writeFileSync(path.join(tmp, 'example', 'secrets', 'api-key'), 'example-api-key\n', { mode: 0o600 });
    const { config, warnings } = loadConfig(file, {
      env: { DOCEX_CLIENT_ID: 'example-client', DOCEX_CLIENT_SECRET: 'example-secret' },
    });
    expect(warnings).toEqual([]);
    expect(config.service).toMatchObject({
      clientId: 'example-client',
      clientSecret: 'example-secret',
      apiKey: 'example-api-key',
    });
    expect(config.service?.managedCompanyId).toBeUndefined();
    expect(config.folders).toHaveLength(1);
    expect(config.folders[0]).toMatchObject({
      name: 'invoices',
      stability: { kind: 'settle', settleMs: 2000 },
    });
    expect(config.folders[0]?.mapping).toBeUndefined();
  });

  it('config/sandbox.yaml loads: sandbox in process, state and drop folders under var/, one folder per seeded kind', () => {
    const { config, warnings } = loadConfig(path.join(configDir, 'sandbox.yaml'), { env: {} });
    expect(warnings).toEqual([]);
    expect(config.service).toBeUndefined();
    expect(config.sandbox).toMatchObject({
      enabled: true,
      stateDir: path.join(root, 'var/sandbox'),
      speed: 10,
      ports: { api: 8443, auth: 8444, files: 8445, admin: 8446 },
    });
    expect(config.stateDir).toBe(path.join(root, 'var/state'));
    expect(config.folders.map((f) => [f.name, f.source.path, f.workflowId, f.mode])).toEqual([
      ['pdf-email', path.join(root, 'var/in/pdf-email'), SEED.workflows.pdfEmail, undefined],
      ['data-file', path.join(root, 'var/in/data-file'), SEED.workflows.dataFile, undefined],
      ['ubl', path.join(root, 'var/in/ubl'), SEED.workflows.ubl, undefined],
      [
        'payload-word',
        path.join(root, 'var/in/payload-word'),
        SEED.workflows.payloadWordEmail,
        'payload-word',
      ],
      [
        'payload-pdf-print',
        path.join(root, 'var/in/payload-pdf-print'),
        SEED.workflows.payloadPdfPrint,
        'payload-pdf',
      ],
      [
        'payload-pdf-batch',
        path.join(root, 'var/in/payload-pdf-batch'),
        SEED.workflows.payloadPdfPrint,
        'payload-pdf',
      ],
    ]);
  });
});
