import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../src/api/query.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

describe('formatDateTime', () => {
  it('writes a Date, epoch ms or an ISO string with Z or an offset as UTC with milliseconds', () => {
    expect(formatDateTime(new Date(Date.UTC(2026, 10, 21, 9, 5, 3, 7)))).toBe('2026-11-21T09:05:03.007Z');
    expect(formatDateTime(Date.UTC(2026, 10, 21))).toBe('2026-11-21T00:00:00.000Z');
    expect(formatDateTime('2026-11-22T01:00:00+01:00')).toBe('2026-11-22T00:00:00.000Z');
    expect(formatDateTime('2026-11-22T01:00:00-0130')).toBe('2026-11-22T02:30:00.000Z');
    expect(formatDateTime('2026-11-21T10:00Z')).toBe('2026-11-21T10:00:00.000Z');
  });

  it('reads a plain calendar date as UTC midnight', () => {
    expect(formatDateTime('2026-11-01')).toBe('2026-11-01T00:00:00.000Z');
  });

  it('refuses a date-time without an offset instead of reading it in the host time zone', () => {
    expect(codeOf(() => formatDateTime('2026-11-21T10:00:00', 'from'))).toBe('DOCEX_INVALID_ARGUMENT');
    expect(codeOf(() => formatDateTime('2026-11-21T10:00:00.000'))).toBe('DOCEX_INVALID_ARGUMENT');
  });

  it('refuses strings that are not ISO 8601 and dates that do not exist', () => {
    for (const text of [
      'Nov 21 2026',
      '21/11/2026',
      '2026-02-30',
      '2026-02-30T00:00:00Z',
      '2026-13-01',
      '',
    ]) {
      expect(
        codeOf(() => formatDateTime(text)),
        text,
      ).toBe('DOCEX_INVALID_ARGUMENT');
    }
    expect(codeOf(() => formatDateTime(Number.NaN))).toBe('DOCEX_INVALID_ARGUMENT');
  });
});
