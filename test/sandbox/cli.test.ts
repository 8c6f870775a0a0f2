import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/agent-process.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-s1-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `docex-agent sandbox <args>` in a child process, logging warnings only. */
const sandboxCli = (args: string[]) => spawnCli(['sandbox', ...args], { DOCEX_LOG_LEVEL: 'warn' });

describe('docex-agent sandbox', () => {
  it('starts with the names profile asked for, says where the credentials and config fragment are, and stops cleanly on SIGTERM', async () => {
    const stateDir = path.join(dir, 'state');
    const child = sandboxCli([
      '--state-dir',
      stateDir,
      '--api-port',
      '0',
      '--auth-port',
      '0',
      '--files-port',
      '0',
      '--admin-port',
      '0',
      '--upload-window',
      '10m',
      '--names',
      'reference',
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await new Promise<void>((resolve, reject) => {
      // A child compiling TypeScript at start on a loaded machine: a generous bound.
      const timer = setTimeout(() => reject(new Error(`no banner: ${out}`)), 45_000);
      child.stdout.on('data', () => {
        if (out.includes('Press Ctrl+C')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}: ${out}`)));
    });
    expect(out).toContain(path.join(stateDir, 'credentials.json'));
    expect(out).toContain(path.join(stateDir, 'agent-config.yaml'));
    expect(out).toMatch(/names: +reference\n/);
    expect(existsSync(path.join(stateDir, 'sandbox.json'))).toBe(true);
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.kill('SIGTERM');
    });
    expect(exit, out).toEqual({ code: 0, signal: null });
  });

  it('refuses a names profile it does not know, before starting anything', async () => {
    const child = sandboxCli(['--state-dir', path.join(dir, 'never'), '--names', 'live']);
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(err).toContain('Allowed choices are spec, reference');
    expect(existsSync(path.join(dir, 'never'))).toBe(false);
  });
});
