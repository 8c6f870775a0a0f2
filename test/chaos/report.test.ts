import { describe, expect, it } from 'vitest';
import { type ChaosReport, cellKey, markdown, passed, rows } from '../../bench/chaos/report.js';
import type { ScenarioResult } from '../../bench/chaos/scenario.js';
import { machine } from '../../bench/support/stats.js';

const clean = {
  ok: true,
  files: 10,
  archived: 10,
  refused: 0,
  lost: [],
  duplicates: [],
  mismatches: [],
  partial: [],
  violations: [],
};
const held: ScenarioResult = {
  scenario: 'kill',
  fault: 'agent SIGKILLed',
  injected: 3,
  injectedDetail: '3 SIGKILL',
  affected: 5,
  files: 10,
  durationMs: 12_300,
  report: clean,
};
const broken: ScenarioResult = {
  ...held,
  scenario: 'service-faults',
  report: {
    ...clean,
    ok: false,
    lost: ['a.pdf'],
    duplicates: ['b.pdf', 'c.pdf'],
    violations: ['a.pdf is in neither archive nor error'],
  },
};
const skipped: ScenarioResult = {
  ...held,
  scenario: 'disk-full',
  report: undefined,
  skipped: 'cannot mount a tmpfs',
};
const crashed: ScenarioResult = {
  ...held,
  scenario: 'token-down',
  report: undefined,
  error: 'agent start did not happen',
};

describe('the chaos report', () => {
  it('passes a scenario whose checks held or that was not run, and fails one with violations or an error', () => {
    expect([held, broken, skipped, crashed].map(passed)).toEqual([true, false, true, false]);
  });

  it('has a row per scenario and mode, with lost and duplicate documents', () => {
    const report: ChaosReport = {
      machine: machine(),
      quick: true,
      seed: 1,
      results: [held, broken, skipped, crashed],
    };
    const table = rows(report);
    expect(table[0]!.slice(1, 8)).toEqual([
      'mode',
      'journal',
      'fault',
      'injected',
      'files affected',
      'lost',
      'duplicates',
    ]);
    // A result written before modes existed dropped single PDFs.
    expect(table[1]![1]).toBe('pdf');
    // A result written before PostgreSQL used SQLite.
    expect(table[1]![2]).toBe('sqlite');
    expect(table[1]!.slice(4, 8)).toEqual(['3', '5', '0', '0']);
    expect(table[2]!.slice(6, 8)).toEqual(['1', '2']);
    expect(table[2]!.at(-1)).toBe('FAILED: 1 violations');
    expect(table[3]!.at(-1)).toBe('not run: cannot mount a tmpfs');
    expect(table[4]!.at(-1)).toBe('FAILED: agent start did not happen');
    const md = markdown(report);
    expect(md).toContain('| kill | pdf | sqlite | agent SIGKILLed | 3 | 5 | 0 | 0 | 10 | 10 | 12 s | ok |');
    expect(md).toContain('violation: a.pdf is in neither archive nor error');
  });

  it('keys and shows a PostgreSQL cell apart from its SQLite twin (SQLite keys as before)', () => {
    const pg: ScenarioResult = { ...held, mode: 'word-csv', journal: 'postgres' };
    expect(cellKey({ ...held, mode: 'word-csv' })).toBe('kill/word-csv');
    expect(cellKey(pg)).toBe('kill/word-csv/postgres');
    const table = rows({ machine: machine(), quick: true, seed: 1, results: [pg] });
    expect(table[1]!.slice(0, 3)).toEqual(['kill', 'word-csv', 'postgres']);
  });
});
