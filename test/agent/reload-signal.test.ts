/**
 * `docex-agent start` as a process runs it (built-in sandbox, ops endpoints on a free port): a
 * real SIGHUP to this process reloads the configuration file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Agent } from '../../src/agent/agent.js';
import { runStart, type StartedControl } from '../../src/cli/start-runner.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { captureLogger } from '../api/support/log-capture.js';
import { listFiles, makePdf } from '../pipeline/support/agent-harness.js';
import { waitFor } from '../support/wait-for.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-hup-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const folder = (name: string) => ({
  name,
  source: { type: 'local', path: `./in/${name}` },
  create: true,
  workflowId: SEED.workflows.pdfEmail,
  stability: { kind: 'settle', settleMs: 50 },
});

describe('SIGHUP', () => {
  it('reloads the file: a folder added is watched, a bad file is refused while the agent runs on', async () => {
    const configFile = path.join(dir, 'agent.yaml');
    writeFileSync(
      configFile,
      stringify({
        sandbox: { enabled: true, speed: 1000 },
        stateDir: './state',
        ops: { listen: '127.0.0.1:0' },
        folders: [folder('invoices')],
      }),
    );
    const { log, lines } = captureLogger('info');
    const handlersBefore = process.listenerCount('SIGHUP');
    let stop: (signal: string) => void = () => {};
    const stopSignal = new Promise<string>((resolve) => {
      stop = resolve;
    });
    let agent: Agent | undefined;
    let control: StartedControl | undefined;
    const exit = runStart(configFile, {
      stopSignal,
      log,
      onStarted: (a, c) => {
        agent = a;
        control = c;
      },
    });
    await waitFor(() => agent, 15_000);
    expect(process.listenerCount('SIGHUP')).toBe(handlersBefore + 1);

    const written = parse(readFileSync(configFile, 'utf8'));
    writeFileSync(configFile, stringify({ ...written, folders: [folder('invoices'), folder('orders')] }));
    process.kill(process.pid, 'SIGHUP');
    await waitFor(() => agent!.plan.running.has('orders'));

    writeFileSync(path.join(dir, 'in', 'orders', 'o-1.pdf'), await makePdf('order'));
    const archive = path.join(dir, 'in', 'orders', '.archive');
    await waitFor(() => listFiles(archive).some((f) => f.endsWith('o-1.pdf.result.json')));
    const metrics = await (await fetch(`${control!.opsUrl}/metrics`)).text();
    expect(metrics).toContain('docex_files_submitted_total{folder="orders"} 1');

    writeFileSync(configFile, 'folders:\n  - name: [broken');
    process.kill(process.pid, 'SIGHUP');
    await waitFor(() => lines().some((l) => String(l['msg']).startsWith('configuration reload refused')));
    expect([...agent!.plan.running.keys()].sort()).toEqual(['invoices', 'orders']);
    expect((await fetch(`${control!.opsUrl}/readyz`)).status).toBe(200);

    stop('SIGTERM');
    expect(await exit).toBe(0);
    expect(lines().filter((l) => l['msg'] === 'configuration reloaded')).toHaveLength(1);
    // The handler goes with the agent.
    expect(process.listenerCount('SIGHUP')).toBe(handlersBefore);
  });

  it('keeps the agent running, with an error logged, when the ops address is taken; a reload asked for during start-up runs once started', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const sub = mkdtempSync(path.join(dir, 'taken-'));
    const configFile = path.join(sub, 'agent.yaml');
    writeFileSync(
      configFile,
      stringify({
        sandbox: { enabled: true, speed: 1000 },
        stateDir: './state',
        ops: { listen: `127.0.0.1:${port}` },
        folders: [folder('invoices')],
      }),
    );
    const { log, lines } = captureLogger('info');
    let stop: (signal: string) => void = () => {};
    const stopSignal = new Promise<string>((resolve) => {
      stop = resolve;
    });
    let control: StartedControl | undefined;
    let trigger: () => void = () => {};
    const exit = runStart(configFile, {
      stopSignal,
      log,
      onStarted: (_a, c) => (control = c),
      reloadSignal: (reload) => {
        trigger = reload;
        return () => {};
      },
    });
    trigger(); // before the agent has started
    await waitFor(() => control, 15_000);
    await waitFor(() => lines().some((l) => l['msg'] === 'configuration reloaded'));
    const msgs = lines().map((l) => l['msg']);
    expect(msgs.indexOf('configuration reloaded')).toBeGreaterThan(msgs.indexOf('agent started'));
    expect(control!.opsUrl).toBeUndefined();
    const refused = lines().find((l) => l['code'] === 'DOCEX_OPS_LISTEN');
    expect(refused).toMatchObject({ level: 'error' });
    expect(String(refused?.['msg'])).toContain('agent runs without /healthz');

    writeFileSync(path.join(sub, 'in', 'invoices', 'i-1.pdf'), await makePdf('still works'));
    const archive = path.join(sub, 'in', 'invoices', '.archive');
    await waitFor(() => listFiles(archive).some((f) => f.endsWith('i-1.pdf.result.json')));
    stop('SIGTERM');
    expect(await exit).toBe(0);
    blocker.close();
  });
});
