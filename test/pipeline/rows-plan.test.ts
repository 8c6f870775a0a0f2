import { describe, expect, it } from 'vitest';
import type { PayloadJobRequest } from '../../src/domain/wire.js';
import type { BuiltRow, CheckResult } from '../../src/pipeline/payload/index.js';
import { planRows, type RowsPlanParts } from '../../src/pipeline/rows-plan.js';

const request = (n: number) => ({ payload: { n } }) as unknown as PayloadJobRequest;
const built = (rows: number[]): { unit: 'row'; rows: BuiltRow[] } => ({
  unit: 'row',
  rows: rows.map((row) => ({ row, request: request(row), file: `${row}.pdf` })),
});

const parts = (reasonNamesColumns: boolean): RowsPlanParts<string> => ({
  reportName: 'orders.csv',
  fileReason: (bad) => `${bad} bad`,
  label: (row) => `row ${row.row}`,
  target: (accepted) => accepted.file,
  reasonNamesColumns,
});

const badRow3: CheckResult['rejected'] = [
  {
    row: 3,
    rule: 7,
    field: 'payload.channelIdentifiers[0].value',
    column: 'Mail',
    message: 'needs an address',
  },
  { row: 3, rule: 'format', field: 'amount', message: 'not a number' },
];

describe('planRows', () => {
  it('numbers rows by position, sends the accepted ones and journals the rejected one with its reasons', () => {
    const check: CheckResult = {
      accepted: [2, 4].map((row) => ({ row, request: request(row), file: `${row}.pdf` })),
      rejected: badRow3,
      fileRejected: false,
    };
    const plan = planRows(built([2, 3, 4]), check, parts(true));
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(plan.rows).toEqual([
      { rowIndex: 0, label: 'row 2' },
      {
        rowIndex: 1,
        label: 'row 3',
        rejected: {
          code: 'DOCEX_PAYLOAD_ROW_INVALID',
          reason: 'rule 7 (column Mail): needs an address; format: not a number',
        },
      },
      { rowIndex: 2, label: 'row 4' },
    ]);
    expect([...plan.byRow]).toEqual([
      [0, '2.pdf'],
      [2, '4.pdf'],
    ]);
    expect(plan.report).toMatch(/^orders\.csv: 1 of 3 rows refused\. The other rows were sent\./);
  });

  it('leaves the column out of row reasons when asked to (the payload-pdf batch reasons)', () => {
    const check: CheckResult = { accepted: [], rejected: badRow3, fileRejected: false };
    const plan = planRows(built([3]), check, parts(false));
    expect(plan.ok && plan.rows[0]?.rejected?.reason).toBe('rule 7: needs an address; format: not a number');
  });

  it('rejects the whole file with its reason and the report when the check rejected the file', () => {
    const check: CheckResult = { accepted: [], rejected: badRow3, fileRejected: true };
    expect(planRows(built([2, 3]), check, parts(true))).toEqual({
      ok: false,
      code: 'DOCEX_INPUT_ROWS_INVALID',
      reason: '1 bad',
      report: expect.stringMatching(/^orders\.csv: 1 of 2 rows refused\. Nothing was sent from this file\./),
    });
  });

  it('does not send an accepted row that has no target (a batch row naming no PDF)', () => {
    const check: CheckResult = {
      accepted: [{ row: 2, request: request(2) }],
      rejected: [],
      fileRejected: false,
    };
    const plan = planRows(built([2]), check, { ...parts(true), target: (accepted) => accepted.file });
    expect(plan.ok && plan.byRow.size).toBe(0);
    expect(plan.ok && plan.report).toBeUndefined();
  });
});
