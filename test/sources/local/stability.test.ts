import { describe, expect, it } from 'vitest';
import {
  dataNameOfMarker,
  isCandidateName,
  isIgnoredName,
  markerNamesFor,
  markerSuffixOf,
  type Observation,
  observe,
  type StabilityRule,
  type StabilityState,
} from '../../../src/sources/local/stability.js';

const settle: StabilityRule = { kind: 'settle', settleMs: 2_000 };
const marker: StabilityRule = { kind: 'done-marker', suffixes: ['.done', '.ready'] };
const renameIn: StabilityRule = { kind: 'rename-in' };
const ok = (size = 10, mtimeMs = 1_000): Observation => ({ size, mtimeMs, readable: true });

/** Feeds observations at the given times and returns each verdict. */
function run(rule: StabilityRule, steps: Array<[number, Observation]>): string[] {
  let state: StabilityState | undefined;
  return steps.map(([now, obs]) => {
    const r = observe(state, obs, now, rule);
    state = r.state;
    return r.verdict;
  });
}

describe('observe: settle rule', () => {
  it('waits on the first observation, however old the mtime (Windows copies keep it)', () => {
    expect(run(settle, [[1_000_000, ok(10, 0)]])).toEqual(['wait']);
  });

  it('is stable once size and mtime are unchanged for the settle time', () => {
    expect(
      run(settle, [
        [0, ok()],
        [1_999, ok()],
        [2_000, ok()],
      ]),
    ).toEqual(['wait', 'wait', 'stable']);
  });

  it('resets the settle timer on a size change', () => {
    expect(
      run(settle, [
        [0, ok(10)],
        [1_500, ok(20)],
        [2_500, ok(20)],
        [3_500, ok(20)],
      ]),
    ).toEqual(['wait', 'wait', 'wait', 'stable']);
  });

  it('resets the settle timer on an mtime change with the same size (rewrite in place)', () => {
    expect(
      run(settle, [
        [0, ok(10, 1)],
        [1_900, ok(10, 2)],
        [2_100, ok(10, 2)],
        [3_900, ok(10, 2)],
      ]),
    ).toEqual(['wait', 'wait', 'wait', 'stable']);
  });

  it('keeps the original since while unchanged, even with sparse observations', () => {
    const first = observe(undefined, ok(), 0, settle);
    const second = observe(first.state, ok(), 500, settle);
    expect(second.state.since).toBe(0);
    expect(observe(second.state, ok(), 2_000, settle).verdict).toBe('stable');
  });

  it('takes a zero-byte file only once it stayed empty for 15 settle times (then refused as empty)', () => {
    expect(
      run(settle, [
        [0, ok(0)],
        [5_000, ok(0)],
        [29_999, ok(0)],
        [30_000, ok(0)],
      ]),
    ).toEqual(['wait', 'wait', 'wait', 'stable']);
  });

  it('restarts the settle time when a zero-byte file is filled', () => {
    expect(
      run(settle, [
        [0, ok(0, 1)],
        [3_000, ok(0, 1)],
        [3_100, ok(50, 2)],
        [4_000, ok(50, 2)],
        [5_100, ok(50, 2)],
      ]),
    ).toEqual(['wait', 'wait', 'wait', 'wait', 'stable']);
  });

  it('says unreadable once an unreadable file has settled, and takes it at the first readable observation', () => {
    const unreadable = { ...ok(), readable: false };
    expect(
      run(settle, [
        [0, unreadable],
        [1_000, unreadable],
        [2_500, unreadable],
        [2_600, ok()],
      ]),
    ).toEqual(['wait', 'wait', 'unreadable', 'stable']);
  });
});

describe('observe: done-marker rule', () => {
  const withMarker = (markerMtime: number, size = 10, mtimeMs = 1_000): Observation => ({
    ...ok(size, mtimeMs),
    marker: { name: 'x.pdf.done', mtimeMs: markerMtime },
  });

  it('waits without a marker, however long the file is unchanged', () => {
    expect(
      run(marker, [
        [0, ok()],
        [60_000, ok()],
      ]),
    ).toEqual(['wait', 'wait']);
  });

  it('is stable at once when a marker at least as new as the file exists', () => {
    expect(run(marker, [[0, withMarker(1_000)]])).toEqual(['stable']);
    expect(run(marker, [[0, withMarker(5_000)]])).toEqual(['stable']);
  });

  it('waits when the data was written after the marker (stale marker from an earlier drop)', () => {
    expect(run(marker, [[0, withMarker(999)]])).toEqual(['wait']);
  });

  it('takes an empty file with its marker (refused later as empty) but not an unreadable one', () => {
    expect(run(marker, [[0, withMarker(2_000, 0)]])).toEqual(['stable']);
    expect(run(marker, [[0, { ...withMarker(2_000), readable: false }]])).toEqual(['unreadable']);
    expect(run(marker, [[0, { ...ok(), readable: false }]])).toEqual(['wait']);
  });
});

describe('observe: rename-in rule', () => {
  it('takes a non-empty readable file at once', () => {
    expect(run(renameIn, [[0, ok()]])).toEqual(['stable']);
  });

  it('takes an empty file at once (refused later as empty) but not an unreadable one', () => {
    expect(run(renameIn, [[0, ok(0)]])).toEqual(['stable']);
    expect(run(renameIn, [[0, { ...ok(), readable: false }]])).toEqual(['unreadable']);
  });
});

describe('names', () => {
  it.each([
    '.hidden.pdf',
    '.processing',
    '~$report.docx',
    'invoice.pdf.tmp',
    'invoice.pdf.TMP',
    'invoice.pdf.part',
    'invoice.pdf.crdownload',
    'invoice.pdf.filepart',
    'invoice.pdf~',
    'invoice.pdf.partial',
  ])('ignores the temporary name %j', (name) => {
    expect(isIgnoredName(name)).toBe(true);
  });

  it.each(['invoice.pdf', 'tmp.pdf', 'part 1.pdf', 'é.csv', 'a\nb.pdf'])('does not ignore %j', (name) => {
    expect(isIgnoredName(name)).toBe(false);
  });

  it('ignores configured extra suffixes, case-insensitively', () => {
    expect(isIgnoredName('a.pdf.Uploading', ['.uploading'])).toBe(true);
  });

  it('recognises markers and the data file they mark', () => {
    expect(markerSuffixOf('x.pdf.done', ['.done', '.ready'])).toBe('.done');
    expect(markerSuffixOf('.done', ['.done'])).toBeUndefined();
    expect(dataNameOfMarker('x.pdf.ready', ['.done', '.ready'])).toBe('x.pdf');
    expect(dataNameOfMarker('x.pdf', ['.done'])).toBeUndefined();
    expect(markerNamesFor('x.pdf', ['.done', '.ready'])).toEqual(['x.pdf.done', 'x.pdf.ready']);
  });

  it('never makes a marker or a temp name a candidate, and applies the filter to the rest', () => {
    const pdfOnly = (n: string) => n.endsWith('.pdf');
    expect(isCandidateName('x.pdf.done', marker, () => true)).toBe(false);
    expect(isCandidateName('x.pdf.done', settle, () => true)).toBe(true);
    expect(isCandidateName('x.pdf.part', settle, () => true)).toBe(false);
    expect(isCandidateName('x.csv', settle, pdfOnly)).toBe(false);
    expect(isCandidateName('x.pdf', settle, pdfOnly)).toBe(true);
  });
});
