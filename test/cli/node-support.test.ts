/**
 * An unsupported Node.js stops every command at once with one plain line and exit code 1, before
 * any command loads its modules (on Node 20 the SQLite driver segfaults instead of failing).
 */
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { unsupportedNode } from '../../src/cli/node-support.js';

describe('the Node.js version check', () => {
  it('accepts Node 22 and newer, and names the version found and the fix for anything older', () => {
    for (const ok of ['v22.0.0', 'v22.23.3', 'v24.21.0', 'v25.1.0'])
      expect(unsupportedNode(ok)).toBeUndefined();
    for (const old of ['v18.20.4', 'v20.19.2', 'v21.7.3']) {
      const line = unsupportedNode(old);
      expect(line).toContain(`this is Node.js ${old}`);
      expect(line).toContain('Node.js 22 or newer');
      expect(line).toContain('Install Node.js 24 LTS');
    }
  });

  it('stops start, check and every other command on Node 20 with that line alone and exit code 1', async () => {
    const run = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [
            '--import',
            './test/cli/support/pretend-node20.mjs',
            '--import',
            'tsx',
            'src/cli/main.ts',
            ...args,
          ],
          (err, stdout, stderr) =>
            resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    for (const args of [
      ['start', '--config', 'no-such-config.yaml'],
      ['check'],
      ['status', 'x.pdf'],
      ['--version'],
    ]) {
      const result = await run(args);
      expect(result.status, args.join(' ')).toBe(1);
      expect(result.stdout, args.join(' ')).toBe('');
      expect(result.stderr.trim().split('\n'), args.join(' ')).toEqual([unsupportedNode('v20.19.2')]);
    }
  }, 60_000);
});
