import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_STATUS_CODE, ERROR_CODES, type ErrorCode } from '../../src/core/error-codes.js';
import { renderErrorTable, withErrorTable } from '../../src/core/error-table.js';
import { DocexError } from '../../src/core/errors.js';
import type { InputErrorCode } from '../../src/pipeline/inspect/codes.js';

const REGISTRY = path.join('src', 'core', 'error-codes.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

/**
 * Every quoted DOCEX_* literal of src/ outside the registry, with the files it is in: the codes
 * thrown, logged or written. Environment variables (`process.env['DOCEX_LOG_LEVEL']`) share the
 * prefix and are not codes.
 */
function codesInSources(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles('src')) {
    if (file === REGISTRY) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?<!process\.env\[)['"`](DOCEX_[A-Z0-9_]+)['"`]/g)) {
      found.set(m[1]!, [...(found.get(m[1]!) ?? []), file]);
    }
  }
  return found;
}

describe('error codes declared once (src/core/error-codes.ts)', () => {
  const used = codesInSources();

  it('declares every code the sources throw, log or write', () => {
    const undeclared = [...used].filter(([code]) => !(code in ERROR_CODES));
    expect(used.size).toBeGreaterThan(100);
    expect(undeclared).toEqual([]);
  });

  it('declares no code the sources never use', () => {
    const unused = Object.keys(ERROR_CODES).filter((code) => !used.has(code));
    expect(unused).toEqual([]);
  });

  it('builds DOCEX_API_<status> in the client only, from the status', () => {
    const api = readFileSync(path.join('src', 'api', 'errors.ts'), 'utf8');
    expect(api).toMatch(/`DOCEX_API_\$\{init\.status\}`/);
    expect(API_STATUS_CODE.name).toBe('DOCEX_API_<status>');
  });

  it('gives every code a meaning and what to do, each one line', () => {
    for (const [code, info] of [
      ...Object.entries(ERROR_CODES),
      [API_STATUS_CODE.name, API_STATUS_CODE] as const,
    ]) {
      expect(code).toMatch(/^DOCEX_[A-Z0-9_<>a-z]+$/);
      expect(info.meaning.length, code).toBeGreaterThan(10);
      expect(info.action.length, code).toBeGreaterThan(5);
      expect(`${info.meaning}${info.action}`, code).not.toContain('\n');
    }
  });

  it('types DocexError codes: a free string or another group does not typecheck', () => {
    // @ts-expect-error a code that is not declared
    const free = new DocexError('DOCEX_NOT_DECLARED', 'x');
    // @ts-expect-error a declared code of another group is not a content-check code
    const notInput: InputErrorCode = 'DOCEX_NETWORK';
    const status: ErrorCode = 'DOCEX_API_503';
    expect([free.code, notInput, status]).toEqual(['DOCEX_NOT_DECLARED', 'DOCEX_NETWORK', 'DOCEX_API_503']);
  });
});

describe('error table in docs/errors.md', () => {
  const page = readFileSync(path.join('docs', 'errors.md'), 'utf8');

  it('is what the registry generates (npm run errors:generate)', () => {
    expect(withErrorTable(page), 'out of date: run `npm run errors:generate`').toBe(page);
  });

  it('lists every declared code once, and keeps the prose around the table', () => {
    const table = renderErrorTable();
    for (const code of Object.keys(ERROR_CODES)) {
      expect(table.split(`| \`${code}\` |`).length - 1, code).toBe(1);
    }
    expect(page.startsWith('# Error codes\n')).toBe(true);
    expect(page).toContain('`DOCEX_API_<status>`');
  });

  it('takes a registry change into the page (the check fails until it is regenerated)', () => {
    const stale = page.replace('| `DOCEX_TLS` |', '| `DOCEX_TLS_OLD` |');
    expect(stale).not.toBe(page);
    expect(withErrorTable(stale)).toBe(page);
  });
});
