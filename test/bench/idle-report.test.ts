import { describe, expect, it } from 'vitest';
import { idleRows, idleTargets } from '../../bench/idle-report.js';

const result = {
  scenario: 'idle' as const,
  folders: 10,
  settleSeconds: 60,
  windowSeconds: 20,
  wakeupsPerSecond: 2.8,
  cpuPercentOfCore: 0.15,
  rssMB: 79.9,
};

describe('idle scenario report', () => {
  it('shows each figure beside its target', () => {
    const rows = idleRows(result);
    expect(rows.map((r) => [r[2], r[5]])).toEqual([
      ['2.8', 'target ≤ 5'],
      ['0.15 %', 'target < 0.1 %'],
      ['79.9 MB', 'target < 80 MB'],
    ]);
  });

  it("shows the RSS's file-backed part and an empty node's RSS, the floor, when measured", () => {
    const rows = idleRows({ ...result, rssMB: 122.9, rssFileMB: 65.3, emptyNodeRssMB: 44 });
    expect(rows.slice(2).map((r) => [r[1], r[2], r[5]])).toEqual([
      [
        'RSS',
        '122.9 MB',
        'target < 80 MB; 65.3 MB of it file-backed (pages of the node binary and libraries)',
      ],
      ['RSS of an empty node, same flags', '44 MB', 'the floor'],
    ]);
  });

  it('marks each target met or not met', () => {
    expect(idleTargets(result)).toEqual([
      'Idle wake-ups ≤ 5/s: 2.8/s — met.',
      'Idle CPU < 0.1 % of a core: 0.15 % — NOT met.',
      'Idle RSS < 80 MB: 79.9 MB — met.',
    ]);
  });

  it('shows a failed run as one row and no targets', () => {
    expect(idleRows({ error: 'agent exited early (2)' })).toEqual([
      ['idle', 'failed', 'agent exited early (2)', '', '', ''],
    ]);
    expect(idleTargets({ error: 'x' })).toEqual([]);
  });
});
