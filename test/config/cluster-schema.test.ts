/** The cluster section: its defaults, durations as people write them, and the limits that keep a late heartbeat from being a death. */
import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.js';

const base = { sandbox: { enabled: true } };

describe('the cluster section', () => {
  it('defaults to a heartbeat every 20 s, dead after 60 s, leases of 60 s renewed every 20 s, a create margin of 10 s', () => {
    expect(agentConfigSchema.parse(base).cluster).toEqual({
      heartbeatMs: 20_000,
      deadAfterMs: 60_000,
      leaseMs: 60_000,
      renewMs: 20_000,
      createMarginMs: 10_000,
    });
    expect(
      agentConfigSchema.parse({ ...base, cluster: { heartbeatMs: '5s', deadAfterMs: '1m' } }).cluster,
    ).toMatchObject({
      heartbeatMs: 5_000,
      deadAfterMs: 60_000,
    });
  });

  it('refuses a renewal slower than a third of the lease, a create margin over a quarter of it, a renewal under a second', () => {
    const issues = (cluster: Record<string, unknown>) =>
      agentConfigSchema
        .safeParse({ ...base, cluster })
        .error?.issues.map((i) => [i.path.join('.'), i.message]);
    expect(issues({ leaseMs: '30s', renewMs: '11s', createMarginMs: '5s' })).toEqual([
      ['cluster.renewMs', 'must be at most a third of leaseMs (10000 ms)'],
    ]);
    expect(issues({ leaseMs: '30s', renewMs: '10s', createMarginMs: '8s' })).toEqual([
      ['cluster.createMarginMs', 'must be at most a quarter of leaseMs (7500 ms)'],
    ]);
    expect(issues({ leaseMs: '3s', renewMs: '500ms', createMarginMs: '500ms' })).toEqual([
      ['cluster.renewMs', 'must be at least 1000 ms'],
    ]);
    expect(issues({ leaseMs: '3s', renewMs: '1s', createMarginMs: '750ms' })).toBeUndefined();
  });

  it('refuses dead-after shorter than two heartbeats, and a heartbeat under a second', () => {
    const issues = (cluster: Record<string, unknown>) =>
      agentConfigSchema
        .safeParse({ ...base, cluster })
        .error?.issues.map((i) => [i.path.join('.'), i.message]);
    expect(issues({ heartbeatMs: '30s', deadAfterMs: '59s' })).toEqual([
      ['cluster.deadAfterMs', 'must be at least twice heartbeatMs (60000 ms)'],
    ]);
    expect(issues({ heartbeatMs: '500ms', deadAfterMs: '10s' })).toEqual([
      ['cluster.heartbeatMs', 'must be at least 1000 ms'],
    ]);
    expect(issues({ heartbeatMs: '30s', deadAfterMs: '60s' })).toBeUndefined();
    expect(issues({ heartbeatMs: '20s', every: '1m' })?.[0]?.[0]).toBe('cluster');
  });
});
