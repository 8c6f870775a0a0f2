import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { notify } from '../../src/api/observer.js';
import { parseListen } from '../../src/config/ops-schema.js';
import { silentLogger } from '../../src/core/logger.js';
import type { PendingUpload } from '../../src/journal/index.js';
import { AgentMetrics, lateUploads, type RunningOps, runChecks, startOps } from '../../src/ops/index.js';
import { apiCheck, toleratingOutage } from '../../src/ops/readiness.js';
import { caughtDocex } from '../api/support/caught.js';

const started: RunningOps[] = [];

afterEach(async () => {
  for (const ops of started.splice(0)) await ops.stop();
});

async function start(metrics = true): Promise<RunningOps> {
  const ops = await startOps({
    config: { enabled: true, listen: { host: '127.0.0.1', port: 0 }, metrics },
    log: silentLogger(),
    metrics: new AgentMetrics({ processMetrics: false }),
  });
  started.push(ops);
  return ops;
}

describe('ops listener', () => {
  it('says alive but not ready while the agent is still starting', async () => {
    const ops = await start();
    expect((await fetch(`${ops.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${ops.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ ready: false, detail: 'starting' });
    const head = await fetch(`${ops.url}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers 404 for /metrics when metrics are off', async () => {
    const ops = await start(false);
    expect((await fetch(`${ops.url}/metrics`)).status).toBe(404);
  });

  it('refuses to start on a port already taken, with DOCEX_OPS_LISTEN naming the address', async () => {
    const first = await start();
    const err = await caughtDocex(
      startOps({
        config: { enabled: true, listen: { host: '127.0.0.1', port: first.port }, metrics: true },
        log: silentLogger(),
      }),
    );
    expect(err).toMatchObject({ code: 'DOCEX_OPS_LISTEN' });
    expect((err as Error).message).toContain(`127.0.0.1:${first.port}`);
    expect((err as Error).message).toContain('EADDRINUSE');
  });

  it('gives every agent its own registry: two sets of metrics in one process count apart', async () => {
    const a = new AgentMetrics();
    const b = new AgentMetrics();
    a.apiObserver.tokenRefresh?.({ ok: true });
    expect((await a.render()).text).toContain('docex_token_refreshes_total{result="ok"} 1');
    expect((await b.render()).text).not.toContain('docex_token_refreshes_total{result="ok"}');
    expect((await b.render()).text).toContain('process_resident_memory_bytes');
  });
});

describe('listen addresses', () => {
  it('reads host:port and [v6]:port, and refuses a missing or too large port', () => {
    expect(parseListen('127.0.0.1:9464')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('localhost:80')).toEqual({ host: 'localhost', port: 80 });
    expect(parseListen('127.0.0.1')).toBeUndefined();
    expect(parseListen('127.0.0.1:70000')).toBeUndefined();
    expect(parseListen('::1:9464')).toBeUndefined();
  });
});

describe('readiness rules', () => {
  const upload = (openedAt: number, deadline: number): PendingUpload => ({
    itemId: 1,
    folder: 'f',
    fileName: 'a.pdf',
    openedAt,
    deadline,
  });

  it('flags an upload from 90% of its window on, not before', () => {
    const pending = [upload(0, 1000)];
    expect(lateUploads(pending, 899)).toEqual([]);
    expect(lateUploads(pending, 900)).toHaveLength(1);
    expect(lateUploads(pending, 2000)).toHaveLength(1);
  });

  it('fails a check that does not answer in time, and one that throws, with its reason', async () => {
    const report = await runChecks(
      [
        { name: 'slow', run: () => new Promise(() => {}) },
        {
          name: 'broken',
          run: async () => {
            throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
          },
        },
        { name: 'fine', run: async () => ({ ok: true }) },
      ],
      50,
    );
    expect(report.ready).toBe(false);
    expect(report.checks['slow']).toMatchObject({ ok: false, detail: 'no answer within 50 ms' });
    expect(report.checks['broken']).toMatchObject({ ok: false, detail: 'ECONNREFUSED: refused' });
    expect(report.checks['fine']).toMatchObject({ ok: true });
  });

  describe('a service check during an outage', () => {
    const ping = (err: unknown) => apiCheck(async () => Promise.reject(err));
    const down = new ApiError('DOCEX_NETWORK', 'GET /health: no answer', { method: 'GET', route: '/health' });
    const unreachable = (forMs: number) => ({ forMs: () => forMs, thresholdMs: 300_000 });

    it('stays ready while the service has been unreachable for less than the threshold, and says so', async () => {
      const report = await runChecks([toleratingOutage(ping(down), unreachable(12_000))]);
      expect(report.ready).toBe(true);
      expect(report.checks['api']!.detail).toMatch(
        /^service unreachable for 12 s \(limit 300 s\): DOCEX_NETWORK/,
      );
    });

    it('fails once the service has been unreachable for the threshold', async () => {
      const busy = new ApiError('DOCEX_API_503', 'busy', { status: 503, method: 'GET', route: '/health' });
      const report = await runChecks([toleratingOutage(ping(busy), unreachable(300_000))]);
      expect(report.ready).toBe(false);
      expect(report.checks['api']!.detail).toContain('service unreachable for 300 s');
    });

    it('fails at once for a setup error such as a refused API key, however short', async () => {
      const refused = new ApiError('DOCEX_API_403', 'forbidden', {
        status: 403,
        method: 'GET',
        route: '/health',
      });
      const report = await runChecks([toleratingOutage(ping(refused), unreachable(0))]);
      expect(report.ready).toBe(false);
      expect(report.checks['api']!.detail).toBe('DOCEX_API_403: forbidden');
    });
  });
});

describe('api observer', () => {
  it('passes events on, and an observer that throws does not fail the call that reports', () => {
    const seen: unknown[] = [];
    notify({ tokenRefresh: (e) => seen.push(e) }, 'tokenRefresh', { ok: true });
    expect(seen).toEqual([{ ok: true }]);
    const broken = {
      request: () => {
        throw new Error('metrics broke');
      },
    };
    expect(() =>
      notify(broken, 'request', { method: 'GET', route: '/jobs', status: 200, seconds: 0.1 }),
    ).not.toThrow();
    expect(() => notify(undefined, 'upload', { bytes: 1, seconds: 1, status: 200 })).not.toThrow();
  });
});
