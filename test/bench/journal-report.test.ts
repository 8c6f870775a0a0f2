import { describe, expect, it } from 'vitest';
import type { BacklogJournalsResult, BurstJournalsResult } from '../../bench/journal-compare.js';
import { journalNotes, journalRows, journalTargets } from '../../bench/journal-report.js';

const agent = (fps: number) => ({
  column: 'agent',
  files: 100,
  seconds: 1,
  filesPerSecond: fps,
  p50Ms: 10,
  p95Ms: 20,
  peakRssMiB: 190,
  cpuMsPerFile: 7.5,
  runs: [fps - 1, fps, fps + 1],
});

const server = {
  files: 100,
  statementsPerFile: 37,
  commitsPerFile: 7,
  execMsPerFile: 2.5,
  cpuMsPerFile: 4,
  top: [{ query: 'BEGIN', calls: 400, totalMs: 1, perFile: 4 }],
};

const burst: BurstJournalsResult = {
  scenario: 'burst-pg',
  files: 100,
  concurrency: 8,
  poolSize: 4,
  sqlite: agent(100),
  postgres: { ...agent(50), server },
  postgresVsSqlite: 0.5,
};

const backlogAgent = (fps: number, firstMs: number) => ({
  firstCreatedMs: firstMs - 100,
  firstUploadedMs: firstMs,
  windowSeconds: 60,
  uploadedInWindow: fps * 60,
  filesPerSecond: fps,
  drained: false,
  peakRssAtFirstUploadMiB: 150,
  peakRssMiB: 210,
  uploadedTotal: fps * 61,
});

const backlog: BacklogJournalsResult = {
  scenario: 'backlog-pg',
  files: 100_000,
  concurrency: 8,
  poolSize: 4,
  createSeconds: 20,
  order: ['postgres', 'sqlite'],
  sqlite: backlogAgent(100, 4_000),
  postgres: { ...backlogAgent(85, 5_200), server },
  postgresVsSqlite: 0.85,
};

describe('the journal comparison in the benchmark report', () => {
  it('has rows for each journal, the ratio and the server per file', () => {
    const rows = journalRows(burst, { error: 'PostgreSQL did not start' }, backlog);
    expect(rows.map((r) => r[1])).toEqual([
      'agent, SQLite journal',
      'agent, PostgreSQL journal',
      'PostgreSQL server, per file',
      'failed',
      'agent, SQLite: start → first job created, first upload',
      'agent, SQLite: uploads, first 60 s',
      'agent, PostgreSQL: start → first job created, first upload',
      'agent, PostgreSQL: uploads, first 60 s',
      'PostgreSQL server, per file',
    ]);
    expect(rows[1]![5]).toContain('0.5× SQLite (target ≥ 0.8×)');
    expect(rows[2]![2]).toBe('37 statements, 7 commits');
  });

  it('says which targets are met: the ratio and the first submission of each journal', () => {
    const targets = journalTargets(burst, undefined, backlog);
    expect(targets[0]).toMatch(/^Burst, PostgreSQL journal ≥ 0.8× SQLite: 0.5× .* — NOT met\.$/);
    expect(targets[1]).toMatch(/^Backlog, PostgreSQL journal ≥ 0.8× SQLite: 0.85× .* — met\.$/);
    expect(targets[2]).toMatch(/SQLite journal, first submission < 5.0 s: 4.0 s — met\.$/);
    expect(targets[3]).toMatch(/PostgreSQL journal, first submission < 5.0 s: 5.2 s — NOT met\.$/);
  });

  it('lists the statements per file of each PostgreSQL run', () => {
    const notes = journalNotes(burst, undefined, backlog);
    expect(notes).toContain('37 statements and 7 commits per file (100 files)');
    expect(notes).toContain('| 4 | 400 | 1 | `BEGIN` |');
  });
});
