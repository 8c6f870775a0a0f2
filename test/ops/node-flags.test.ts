/** Every shipped launcher starts the agent with the same Node flags (src/ops/node-flags.ts). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_NODE_FLAGS } from '../../src/ops/node-flags.js';

/** The arguments between the node binary and the script it runs. */
function flagsBefore(args: readonly string[], script: RegExp): string[] {
  const at = args.findIndex((a) => script.test(a));
  if (at < 0) throw new Error(`no ${script} in ${args.join(' ')}`);
  return args.slice(1, at);
}

describe('launchers', () => {
  it('the systemd unit runs node with the agent flags', () => {
    const line = readFileSync('systemd/docex-agent.service', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('ExecStart='));
    const args = line!.slice('ExecStart='.length).split(/\s+/);
    expect(flagsBefore(args, /dist\/cli\/main\.js$/)).toEqual(AGENT_NODE_FLAGS);
  });

  it('the container image runs node with the agent flags', () => {
    const entrypoint = /^ENTRYPOINT (.+)$/m.exec(readFileSync('Dockerfile', 'utf8'));
    const args = JSON.parse(entrypoint![1]!) as string[];
    expect(args[0]).toBe('node');
    expect(flagsBefore(args, /dist\/cli\/main\.js$/)).toEqual(AGENT_NODE_FLAGS);
  });

  it("npm start runs node itself with tsx's loader and the agent flags", () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    const args = pkg.scripts['start']!.split(/\s+/);
    // Not tsx's runner: its parent process passes a Ctrl-C on to the agent a second time.
    expect(args.slice(0, 3)).toEqual(['node', '--import', 'tsx']);
    expect(flagsBefore(args, /src\/cli\/main\.ts$/).slice(2)).toEqual(AGENT_NODE_FLAGS);
  });
});
