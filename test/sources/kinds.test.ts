import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../src/config/folder-schema.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { intakeOf, kindOf, relativePathOf, SOURCE_KINDS, subFoldersOf } from '../../src/sources/kinds.js';
import { SOURCE_FACTORIES } from '../../src/sources/open-source.js';

/** The parts every kind supplies (sources/kind.ts), by what they are. */
const FUNCTIONS = [
  'defaults',
  'defaultDir',
  'withStateDefaults',
  'folderIssues',
  'resolvePaths',
  'identity',
  'intake',
  'localDropFolder',
  'ownDirs',
] as const;
const FLAGS = ['remote', 'sharedFolder'] as const;

/** One folder's source of each registered kind, as an operator writes it. */
const EXAMPLES: Record<string, Record<string, unknown>> = {
  local: { type: 'local', path: 'in/invoices' },
  sftp: {
    type: 'sftp',
    host: 'sftp.example.test',
    username: 'erp',
    password: 'pw',
    hostKey: { sha256: ['SHA256:hB2HALNNQwbyi/6kduVzlUWsY7vDlMmfoqnIG2cTxcY'] },
    path: '/outbox/invoices',
  },
};

const parseFolder = (source: Record<string, unknown>, stateDir = '/var/lib/docex') =>
  agentConfigSchema.parse({
    sandbox: { enabled: true },
    stateDir,
    folders: [{ name: 'invoices', workflowId: 'wf_pdf_email', source }],
  }).folders[0]!;

describe('the registry of kinds of source', () => {
  it('registers each type once, and every kind supplies every part of the contract', () => {
    const types = SOURCE_KINDS.map((kind) => kind.type);
    expect(new Set(types).size).toBe(types.length);
    for (const kind of SOURCE_KINDS) {
      expect(kind.label, kind.type).toMatch(/\S/);
      for (const part of FUNCTIONS) expect(typeof kind[part], `${kind.type}.${part}`).toBe('function');
      for (const flag of FLAGS) expect(typeof kind[flag], `${kind.type}.${flag}`).toBe('boolean');
      // Its schema is the `source:` block of its own type.
      expect(kind.schema.shape.type.value, kind.type).toBe(kind.type);
    }
  });

  it('builds the configuration’s source union from the registry, in its order', () => {
    expect(sourceSchema.options).toEqual(SOURCE_KINDS.map((kind) => kind.schema));
    for (const kind of SOURCE_KINDS)
      expect(sourceSchema.description).toContain(`${kind.type} (${kind.label})`);
  });

  it('gives every registered kind a factory, and no unregistered one', () => {
    expect(Object.keys(SOURCE_FACTORIES).sort()).toEqual(SOURCE_KINDS.map((kind) => kind.type).sort());
    for (const factory of Object.values(SOURCE_FACTORIES)) expect(typeof factory).toBe('function');
  });

  it('has an example folder for every kind, parsed and resolved through that kind', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(SOURCE_KINDS.map((kind) => kind.type).sort());
    for (const kind of SOURCE_KINDS) {
      const folder = parseFolder(EXAMPLES[kind.type]!);
      expect(kindOf(folder.source)).toBe(kind);
      // State-folder defaults are filled: no '' left for the archive and error folders.
      expect(folder.archiveDir, kind.type).not.toBe('');
      expect(folder.errorDir, kind.type).not.toBe('');
      const resolved = kindOf(folder.source).resolvePaths(folder.source, '/etc/docex');
      for (const dir of kindOf(resolved).ownDirs(resolved)) expect(path.isAbsolute(dir), dir).toBe(true);
      expect(path.isAbsolute(intakeOf({ source: resolved }).dir), kind.type).toBe(true);
      expect(kindOf(resolved).identity(resolved), kind.type).toMatch(/\S/);
    }
  });

  it('keeps a local folder’s claimed files shared and in its own folder, an SFTP folder’s in this agent’s spool', () => {
    const local = parseFolder(EXAMPLES.local!);
    const sftp = parseFolder(EXAMPLES.sftp!);
    expect(kindOf(local.source)).toMatchObject({ remote: false, sharedFolder: true });
    expect(kindOf(sftp.source)).toMatchObject({ remote: true, sharedFolder: false });
    expect(kindOf(local.source).localDropFolder(local.source)).toBe('in/invoices');
    expect(kindOf(sftp.source).localDropFolder(sftp.source)).toBeUndefined();
    expect(kindOf(sftp.source).identity(sftp.source)).toBe('sftp://erp@sftp.example.test:22/outbox/invoices');
  });
});

/**
 * A recorded file's path relative to its drop folder: the one recorded at its claim outlives a
 * change of the folder's path; an item recorded before the journal kept it is read from where it
 * was dropped, as before.
 */
const folderAt = (dir: string) => ({
  source: { type: 'local' as const, path: dir, usePolling: false, pollIntervalMs: 2000 },
});
const moved = folderAt(path.resolve('/srv/erp/moved'));
const dropped = path.join(path.resolve('/srv/erp/out'), 'acme', 'invoices', 'x.pdf');

describe('relativePathOf', () => {
  it('answers the path recorded at the claim, whatever the folder’s path is now', () => {
    const file = { relativePath: 'acme/invoices/x.pdf', sourcePath: dropped, fileName: 'x.pdf' };
    expect(relativePathOf(moved, file)).toBe('acme/invoices/x.pdf');
    expect(relativePathOf(undefined, file)).toBe('acme/invoices/x.pdf');
    expect(subFoldersOf(moved, file)).toEqual(['acme', 'invoices']);
  });

  it('reads an earlier agent’s item (no recorded path) from where it was dropped, its name when moved', () => {
    const file = { sourcePath: dropped, fileName: 'x.pdf' };
    expect(relativePathOf(folderAt(path.resolve('/srv/erp/out')), file)).toBe('acme/invoices/x.pdf');
    expect(relativePathOf(moved, file)).toBe('x.pdf');
  });

  it('keeps the sub-path of a file whose own name the pipeline refuses (its reason is the name’s, not a lost sub-path)', () => {
    const file = { relativePath: 'acme/\u200Ex.pdf', fileName: '\u200Ex.pdf' };
    expect(relativePathOf(moved, file)).toBe('acme/\u200Ex.pdf');
    expect(subFoldersOf(moved, file)).toEqual(['acme']);
    for (const steering of ['acme/..', 'acme/.', 'acme/', 'acme/x\u0000.pdf']) {
      expect(relativePathOf(moved, { relativePath: steering, fileName: 'x.pdf' }), steering).toBe('x.pdf');
    }
  });

  it('never uses a recorded path with a segment the agent does not take', () => {
    for (const hostile of ['../x.pdf', 'acme/../../x.pdf', '/etc/x.pdf', 'a\nb/x.pdf', 'acme//x.pdf']) {
      expect(relativePathOf(moved, { relativePath: hostile, fileName: 'x.pdf' }), hostile).toBe('x.pdf');
    }
  });
});
