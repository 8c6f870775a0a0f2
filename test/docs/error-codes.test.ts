import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Environment variables share the prefix but are not error codes. */
const NOT_CODES = new Set(['DOCEX_LOG_LEVEL', 'DOCEX_REQUIRE_SSHD', 'DOCEX_TEST_CRASH_AT']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sourceFiles(full) : full.endsWith('.ts') ? [full] : [];
  });
}

describe('error table in docs/errors.md', () => {
  it('lists every error code the sources can produce', () => {
    const table = readFileSync('docs/errors.md', 'utf8');
    const codes = new Set<string>();
    for (const file of sourceFiles('src')) {
      for (const m of readFileSync(file, 'utf8').matchAll(/['"`](DOCEX_[A-Z0-9_]+)['"`]/g)) codes.add(m[1]!);
    }
    const missing = [...codes].filter((code) => !NOT_CODES.has(code) && !table.includes(`\`${code}\``));
    expect(codes.size).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });
});
