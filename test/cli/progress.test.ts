import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatDuration,
  formatProgress,
  type ProgressSink,
  progressLine,
} from '../../src/cli/output/progress.js';

describe('progress formatter', () => {
  it('writes bytes in binary units and durations in seconds, minutes or hours', () => {
    expect(formatBytes(900)).toBe('900 B');
    expect(formatBytes(512 * 1024)).toBe('512 KiB');
    expect(formatBytes(12.34 * 1024 * 1024)).toBe('12.3 MiB');
    expect(formatBytes(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(formatDuration(44_600)).toBe('45 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(7_620_000)).toBe('2 h 07 min');
  });

  it('shows bytes done of the total, the rate and the time left', () => {
    const line = formatProgress({
      label: 'uploading big.pdf',
      unit: 'bytes',
      done: 256 * 1024 * 1024,
      total: 1024 * 1024 * 1024,
      elapsedMs: 4000,
    });
    expect(line).toBe('uploading big.pdf: 256.0 MiB of 1.0 GiB (25 %), 64.0 MiB/s, 12 s left');
  });

  it('shows items with their noun and no rate before a second has passed', () => {
    expect(
      formatProgress({
        label: 'report',
        unit: 'items',
        noun: 'rows',
        done: 1500,
        total: 12000,
        elapsedMs: 400,
      }),
    ).toBe('report: 1,500 of 12,000 rows (12 %)');
    expect(
      formatProgress({
        label: 'usage export',
        unit: 'items',
        noun: 'events',
        done: 3000,
        elapsedMs: 2000,
        at: '2026-10-14T08:00:00Z',
      }),
    ).toBe('usage export: 3,000 events, at 2026-10-14T08:00:00Z, 1,500 events/s');
  });

  it('never says more than 100 % nor a time left once the total is reached', () => {
    expect(formatProgress({ label: 'x', unit: 'bytes', done: 2048, total: 1024, elapsedMs: 2000 })).toBe(
      'x: 2 KiB of 1 KiB (100 %), 1 KiB/s',
    );
  });
});

function recordingSink(isTTY: boolean | undefined): ProgressSink & { text: string } {
  const sink = {
    isTTY,
    text: '',
    write(t: string) {
      sink.text += t;
      return true;
    },
  };
  return sink;
}

describe('progress line', () => {
  it('writes nothing at all when stderr is not a terminal', () => {
    for (const tty of [false, undefined]) {
      const sink = recordingSink(tty);
      const line = progressLine(sink, { label: 'uploading a.pdf', unit: 'bytes', total: 10 });
      line.update(5);
      line.end();
      expect(sink.text).toBe('');
    }
  });

  it('on a terminal rewrites one line in place at most once per interval, and clears it at the end', () => {
    let t = 0;
    const sink = recordingSink(true);
    const line = progressLine(
      sink,
      { label: 'up', unit: 'bytes', total: 4096 },
      { now: () => t, minIntervalMs: 250 },
    );
    line.update(1024);
    t = 100;
    line.update(2048); // within 250 ms of the last rewrite: skipped
    t = 2000;
    line.update(3072);
    line.end();
    expect(sink.text).toBe(
      '\r\u001b[Kup: 1 KiB of 4 KiB (25 %)' +
        '\r\u001b[Kup: 3 KiB of 4 KiB (75 %), 2 KiB/s, 1 s left' +
        '\r\u001b[K',
    );
  });

  it('counts the rate from the first amount reported, not from when the line was made', () => {
    let t = 0;
    const sink = recordingSink(true);
    const line = progressLine(sink, { label: 'up', unit: 'bytes', total: 4096 }, { now: () => t });
    t = 60_000; // a minute of hashing and creating the job before the first byte is sent
    line.update(1024);
    t = 61_000;
    line.update(2048);
    expect(sink.text.endsWith('up: 2 KiB of 4 KiB (50 %), 2 KiB/s, 1 s left')).toBe(true);
  });
});
