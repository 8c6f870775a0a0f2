/**
 * docex_agents_alive: pulled at scrape time from the running agent's cluster store; no sample when
 * there is no source or the database does not answer (a wrong number is worse than none).
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AgentMetrics } from '../../src/ops/index.js';

const sample = (text: string) => text.split('\n').find((l) => l.startsWith('docex_agents_alive '));

describe('docex_agents_alive', () => {
  it('is the number the cluster answers, and absent without one', async () => {
    const metrics = new AgentMetrics({ processMetrics: false });
    expect(sample((await metrics.render()).text)).toBeUndefined();
    let alive: number | Error = 3;
    metrics.attach({
      clock: new ManualClock(),
      agentsAlive: async () => {
        if (alive instanceof Error) throw alive;
        return alive;
      },
    });
    const { text } = await metrics.render();
    expect(text).toContain('# TYPE docex_agents_alive gauge');
    expect(sample(text)).toBe('docex_agents_alive 3');
    alive = new Error('the journal at postgres://db: heartbeat failed');
    expect(sample((await metrics.render()).text)).toBeUndefined();
    alive = 1;
    expect(sample((await metrics.render()).text)).toBe('docex_agents_alive 1');
  });
});

describe('docex_cluster_tasks_total', () => {
  it('counts each task claim as ran or left, by task, from the cluster part', async () => {
    const metrics = new AgentMetrics({ processMetrics: false });
    const claims = new Map([
      ['returns:follow-sweep', { ran: 4, left: 5 }],
      ['retention:journal', { ran: 0, left: 1 }],
    ]);
    metrics.attach({ clock: new ManualClock(), clusterTasks: () => claims });
    const lines = (await metrics.render()).text
      .split('\n')
      .filter((l) => l.startsWith('docex_cluster_tasks_total{'));
    expect(lines.sort()).toEqual([
      'docex_cluster_tasks_total{task="retention:journal",outcome="left"} 1',
      'docex_cluster_tasks_total{task="retention:journal",outcome="ran"} 0',
      'docex_cluster_tasks_total{task="returns:follow-sweep",outcome="left"} 5',
      'docex_cluster_tasks_total{task="returns:follow-sweep",outcome="ran"} 4',
    ]);
  });
});
