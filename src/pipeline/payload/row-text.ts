/**
 * The character rules of domain/payload-text.ts as row problems, run where a row is built (in the
 * isolated inspector): a control character, a line break in a one-line field or an invisible
 * character in an identifier rejects its row, with the field, the column it came from and the
 * code point, through the same per-row path as a broken payload rule.
 */
import { checkPayloadText, type PayloadTextProblemKind } from '../../domain/payload-text.js';
import type { PayloadJobRequest } from '../../domain/wire.js';
import type { InputErrorCode } from '../inspect/codes.js';
import type { RowProblem } from './types.js';

const CODES: Record<PayloadTextProblemKind, InputErrorCode> = {
  control: 'DOCEX_INPUT_CONTROL_CHARACTER',
  invisible: 'DOCEX_INPUT_INVISIBLE_CHARACTER',
};

export function textProblemsOf(
  request: PayloadJobRequest,
  columnOf?: (path: readonly (string | number)[]) => string | undefined,
): RowProblem[] {
  return checkPayloadText(request).map((p) => {
    const column = columnOf?.(p.path);
    return {
      rule: 'format',
      field: p.field,
      message: p.message,
      code: CODES[p.kind],
      ...(column === undefined ? {} : { column }),
    };
  });
}

/** The code a set of problems shares, or `fallback` when they have none or several. */
export function sharedCode<C extends string>(
  problems: readonly { code?: InputErrorCode | undefined }[],
  fallback: C,
): InputErrorCode | C {
  const first = problems[0]?.code;
  return first !== undefined && problems.every((p) => p.code === first) ? first : fallback;
}
