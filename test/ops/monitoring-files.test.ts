/**
 * The ready-made monitoring in ops/: the alert rules checked and unit-tested by Prometheus's own
 * promtool (Debian: apt-get install prometheus), and the Grafana dashboard's queries naming only
 * metrics the agent serves. Without promtool the promtool part is skipped with its reason, unless
 * DOCEX_REQUIRE_PROMTOOL=1 (CI), where it fails instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentMetrics } from '../../src/ops/index.js';

const PROMTOOL = process.env.DOCEX_PROMTOOL ?? '/usr/bin/promtool';
const required = process.env.DOCEX_REQUIRE_PROMTOOL === '1';
const OPS = path.resolve('ops');

function promtool(args: string[]): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, args, { cwd: OPS, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Every `docex_*`, `process_*` and `nodejs_*` name in a PromQL text, without histogram suffixes. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b((?:docex|process|nodejs)_[a-z0-9_]+)/g)].map((m) =>
    m[1]!.replace(/_(bucket|count|sum)$/, ''),
  );
}

async function servedNames(): Promise<Set<string>> {
  const text = await new AgentMetrics().registry.metrics();
  return new Set([...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!));
}

const rules = () => {
  it('passes promtool check rules', () => {
    const run = promtool(['check', 'rules', 'prometheus-alerts.yaml']);
    expect(run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });

  it('fires as its unit tests expect (promtool test rules)', () => {
    const run = promtool(['test', 'rules', 'prometheus-alerts.test.yaml']);
    expect(run.output).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });
};

if (existsSync(PROMTOOL)) describe('ops/prometheus-alerts.yaml', rules);
else if (required)
  describe('ops/prometheus-alerts.yaml', () => {
    it('needs promtool (DOCEX_REQUIRE_PROMTOOL=1)', () => {
      throw new Error(
        `${PROMTOOL} not found: apt-get install prometheus (DOCEX_REQUIRE_PROMTOOL=1 forbids skipping)`,
      );
    });
  });
else
  describe.skip(
    `ops/prometheus-alerts.yaml [skipped: ${PROMTOOL} not found; apt-get install prometheus]`,
    rules,
  );

describe('ops monitoring files', () => {
  it('alert rules name only metrics the agent serves', async () => {
    const served = await servedNames();
    const text = readFileSync(path.join(OPS, 'prometheus-alerts.yaml'), 'utf8');
    const exprs = [...text.matchAll(/expr: (.+)/g)].map((m) => m[1]!);
    const unknown = exprs.flatMap(metricNames).filter((n) => !served.has(n));
    expect(exprs.length).toBeGreaterThanOrEqual(7);
    expect(unknown).toEqual([]);
  });

  it('the Grafana dashboard is JSON whose every query names only metrics the agent serves', async () => {
    const served = await servedNames();
    const dashboard = JSON.parse(readFileSync(path.join(OPS, 'grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const unknown = exprs.flatMap(metricNames).filter((n) => !served.has(n));
    expect(unknown).toEqual([]);
  });
});
