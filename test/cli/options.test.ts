import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseDuration, parsePort, parseSpeed } from '../../src/cli/options.js';
import { registerSandboxCommand } from '../../src/cli/sandbox-command.js';

describe('command option parsers', () => {
  it('reads durations in ms, s, m, h and d, and a bare number as milliseconds', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1500')).toBe(1500);
    expect(() => parseDuration('soon')).toThrow(InvalidArgumentError);
  });

  it('takes ports 0 to 65535 only', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('8443')).toBe(8443);
    for (const bad of ['65536', '-1', '80.5', '', 'http'])
      expect(() => parsePort(bad), bad).toThrow(InvalidArgumentError);
  });

  it('takes a positive finite speed only', () => {
    expect(parseSpeed('50')).toBe(50);
    expect(parseSpeed('0.5')).toBe(0.5);
    for (const bad of ['0', '-2', 'fast', '', 'Infinity'])
      expect(() => parseSpeed(bad), bad).toThrow(InvalidArgumentError);
  });

  it('refuses a sandbox --speed that is not a positive number before starting anything', async () => {
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    registerSandboxCommand(program);
    const run = program.parseAsync(['node', 'docex-agent', 'sandbox', '--speed', 'fast']);
    await expect(run).rejects.toBeInstanceOf(CommanderError);
    await expect(run).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
});
