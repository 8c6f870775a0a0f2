import { describe, expect, it } from 'vitest';
import type { BurstResult } from '../../bench/burst.js';
import { type BenchReport, consoleTable, markdown, rows } from '../../bench/report.js';
import { medianRun, percentile, rotate } from '../../bench/support/stats.js';

const machine = {
  cpu: 'Test CPU',
  cores: 2,
  node: 'v20.19.0',
  platform: 'Linux 6',
  memoryGiB: 4,
  loadAverageAtStart: [1, 2, 3],
  date: '2026-11-22T00:00:00.000Z',
};

const column = (name: string, fps: number) => ({
  column: name,
  files: 100,
  seconds: 1,
  filesPerSecond: fps,
  p50Ms: 10,
  p95Ms: 20,
});

const report: BenchReport = {
  machine,
  quick: false,
  burst: {
    scenario: 'burst',
    files: 100,
    concurrency: 8,
    pdfBytes: 900,
    agent: { ...column('agent', 100), peakRssMiB: 90 },
    curl: column('bash + curl per file', 10),
    ceiling: column('keep-alive client (ceiling)', 200),
    agentVsCurl: 10,
    agentVsCeiling: 0.5,
  },
  largeFile: { error: 'curl -T exited 7' },
};

describe('benchmark report', () => {
  it('percentile is nearest-rank and 0 for no values', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(percentile([5, 1, 4, 2, 3], 0.95)).toBe(5);
    expect(percentile([], 0.95)).toBe(0);
  });

  it('medianRun answers the whole median run (the lower middle of an even count)', () => {
    const runs = [
      { fps: 300, p95: 1 },
      { fps: 100, p95: 2 },
      { fps: 200, p95: 3 },
    ];
    expect(medianRun(runs, (r) => r.fps)).toEqual({ fps: 200, p95: 3 });
    expect(medianRun(runs.slice(0, 2), (r) => r.fps)).toEqual({ fps: 100, p95: 2 });
    expect(() => medianRun([], (r: number) => r)).toThrow();
  });

  it('rotate puts every column in every position once over as many rounds', () => {
    expect([0, 1, 2].map((r) => rotate(['a', 'b', 'c'], r))).toEqual([
      ['a', 'b', 'c'],
      ['b', 'c', 'a'],
      ['c', 'a', 'b'],
    ]);
  });

  it('puts the ratios against their targets next to the columns, and a failed scenario as failed', () => {
    const table = rows(report);
    expect(table).toHaveLength(5);
    expect(table[2]).toContain('agent 10× (target ≥ 10×)');
    expect(table[3]).toContain('agent 0.5× (target ≥ 0.5×)');
    expect(table[4]).toEqual(['large file', 'failed', 'curl -T exited 7', '', '', '']);
    expect(consoleTable(report).split('\n')).toHaveLength(5);
  });

  it('shows the median run of a column run several times, with every run', () => {
    const table = rows({
      ...report,
      burst: {
        ...(report.burst as BurstResult),
        agent: { ...column('agent', 120), runs: [90, 120, 130], peakRssMiB: 90 },
      },
    });
    expect(table[1]![2]).toBe('120 files/s, median of 90 / 120 / 130');
    expect(table[2]![2]).toBe('10 files/s');
  });

  it('shows the large file median runs and the highest peak RSS of its runs', () => {
    const table = rows({
      ...report,
      largeFile: {
        scenario: 'large-file',
        bytes: 1024 * 1024 * 1024,
        agentDropToUploadedMiBps: 110,
        agentPutMiBps: 120,
        agentSeconds: 9.3,
        agentPeakRssMiB: 140,
        curlMiBps: 105,
        curlSeconds: 9.8,
        agentVsCurl: 1.05,
        agentPutVsCurl: 1.14,
        runs: { agentMiBps: [100, 110, 115], curlMiBps: [105, 104, 108], agentPeakRssMiB: [131, 140, 135] },
      },
    });
    expect(table.find((r) => r[1] === 'agent drop→uploaded')![2]).toBe(
      '110 MiB/s, median of 100 / 110 / 115',
    );
    expect(table.find((r) => r[1] === 'agent peak RSS')![2]).toBe('140 MiB, highest of 131 / 140 / 135');
  });

  it('writes the machine and the table as markdown', () => {
    const md = markdown(report);
    expect(md).toContain('Test CPU, 2 cores');
    expect(md).toContain('Node v20.19.0');
    expect(md).toContain('| agent (own process) | 100 files/s | 10 | 20 |');
    expect(md).not.toContain('merged in');
  });

  it('names the scenarios run again and merged in, with their date', () => {
    const md = markdown({
      ...report,
      merged: [{ date: '2026-11-25T01:50:00.000Z', scenarios: ['returnPath'] }],
    });
    expect(md).toContain('- Run again on 2026-11-25T01:50:00.000Z and merged in: returnPath');
  });
});
