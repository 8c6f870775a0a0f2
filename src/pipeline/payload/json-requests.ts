/**
 * Payload job requests from JSON: a payload-word file holding one request or an array of them, and
 * the sidecar (`<name>.json`) of a payload-pdf PDF. Missing workflowId, jobName and filename are
 * filled from the folder; a workflowId naming another workflow than the folder's is a row problem,
 * so a file dropped in the wrong folder is never sent to the wrong workflow.
 */
import path from 'node:path';
import { fieldOf } from '../../domain/payload-text.js';
import { type PayloadJobRequest, payloadJobRequestSchema } from '../../domain/wire.js';
import { quoteName, reject } from '../inspect/codes.js';
import { type DuplicateKey, findDuplicateKeys, parseJsonText } from '../inspect/json.js';
import { decodeUtf8 } from '../inspect/text.js';
import { textProblemsOf } from './row-text.js';
import type { BuildResult, BuiltRow, RowProblem } from './types.js';

export interface JsonRequestOptions {
  workflowId: string;
  fileName: string;
  jobNamePrefix?: string;
}

/**
 * The value of JSON text and the keys it names twice, by item. The repeated keys are found by a
 * scan of the tokens (findDuplicateKeys), not a parser of our own: JSON.parse stays the one parser.
 */
function parseJson(
  input: string | Buffer,
  fileName: string,
): { ok: true; value: unknown; duplicates: Map<number, DuplicateKey[]> } | ReturnType<typeof reject> {
  const decoded =
    typeof input === 'string' ? { ok: true as const, text: input } : decodeUtf8(input, fileName);
  if (!decoded.ok) return decoded;
  const parsed = parseJsonText(decoded.text, fileName);
  if (!parsed.ok) return parsed;
  const duplicates = new Map<number, DuplicateKey[]>();
  for (const d of findDuplicateKeys(decoded.text)) {
    const list = duplicates.get(d.item) ?? [];
    list.push(d);
    duplicates.set(d.item, list);
  }
  return { ok: true, value: parsed.value, duplicates };
}

function duplicateProblem(d: DuplicateKey, prefix: readonly string[]): RowProblem {
  const path = [...prefix, ...d.path];
  const where = path.length > 1 ? ` in ${fieldOf(path.slice(0, -1))}` : '';
  const key = d.key.length > 40 ? `${d.key.slice(0, 40)}…` : d.key;
  return {
    rule: 'format',
    field: fieldOf(path),
    message: `the key ${quoteName(key)} appears more than once${where}; a JSON reader keeps only one of its values`,
    code: 'DOCEX_INPUT_JSON_DUPLICATE_KEY',
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function toRow(
  item: unknown,
  row: number,
  defaults: { workflowId: string; jobName: string; filename: string },
  file?: string,
  duplicates: readonly RowProblem[] = [],
): BuiltRow {
  const base = file === undefined ? {} : { file };
  if (!isObject(item)) {
    return { row, problems: [{ rule: 'format', field: '', message: 'is not a JSON object' }], ...base };
  }
  const problems: RowProblem[] = [...duplicates];
  if (typeof item['workflowId'] === 'string' && item['workflowId'] !== defaults.workflowId) {
    problems.push({
      rule: 'format',
      field: 'workflowId',
      message: `names workflow ${item['workflowId']}, but the folder is mapped to ${defaults.workflowId}`,
    });
  }
  const filled = {
    ...item,
    workflowId: item['workflowId'] ?? defaults.workflowId,
    jobName: item['jobName'] ?? defaults.jobName,
    filename: item['filename'] ?? defaults.filename,
  };
  const parsed = payloadJobRequestSchema.safeParse(filled);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push({ rule: 'format', field: issue.path.join('.'), message: issue.message });
    }
  }
  if (parsed.success) problems.push(...textProblemsOf(parsed.data as PayloadJobRequest));
  if (problems.length > 0 || !parsed.success) return { row, problems, ...base };
  return { row, request: parsed.data as PayloadJobRequest, ...base };
}

/** payload-word JSON: one request, or an array (item n = row n). */
export function payloadRequestsFromJson(input: string | Buffer, opts: JsonRequestOptions): BuildResult {
  const parsed = parseJson(input, opts.fileName);
  if (!parsed.ok) return parsed;
  const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  if (items.length === 0)
    return reject('DOCEX_INPUT_NO_RECORDS', `${quoteName(opts.fileName)} is an empty JSON array.`);
  const stem = path.basename(opts.fileName, path.extname(opts.fileName));
  const single = items.length === 1;
  const rows = items.map((item, i) =>
    toRow(
      item,
      i + 1,
      {
        workflowId: opts.workflowId,
        jobName: `${opts.jobNamePrefix ?? ''}${opts.fileName}${single ? '' : ` item ${i + 1}`}`,
        filename: `${stem}${single ? '' : `-${i + 1}`}.docx`,
      },
      undefined,
      (parsed.duplicates.get(i + 1) ?? []).map((d) => duplicateProblem(d, [])),
    ),
  );
  return { ok: true, unit: 'item', rows };
}

/**
 * payload-pdf sidecar: either a whole request (`{workflowId?, jobName?, filename?, payload}`) or
 * the bare payload (`{channelIdentifiers, extraInfoIdentifiers, templateData?}`). Defaults:
 * filename the PDF's name, jobName `<prefix><pdfName>`.
 */
export function payloadPdfFromSidecar(
  pdfName: string,
  sidecar: string | Buffer,
  opts: { workflowId: string; sidecarName?: string; jobNamePrefix?: string },
): BuildResult {
  const sidecarName = opts.sidecarName ?? `${path.basename(pdfName, path.extname(pdfName))}.json`;
  const parsed = parseJson(sidecar, sidecarName);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  const bare = isObject(value) && !('payload' in value) && 'channelIdentifiers' in value;
  const request = bare ? { payload: value } : value;
  const row = toRow(
    request,
    1,
    {
      workflowId: opts.workflowId,
      jobName: `${opts.jobNamePrefix ?? ''}${pdfName}`,
      filename: path.basename(pdfName),
    },
    pdfName,
    (parsed.duplicates.get(1) ?? []).map((d) => duplicateProblem(d, bare ? ['payload'] : [])),
  );
  return { ok: true, unit: 'item', rows: [row] };
}
