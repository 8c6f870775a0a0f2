/**
 * payload-word requests from an ERP's XML, through a per-folder mapping kept deliberately small:
 *
 *   record: 'customers/customer'          element path from the root to the repeating record
 *   fields:                               path inside a record -> column name of the CSV grammar
 *     '@id': 'extra.customerId'           an attribute of the record
 *     'email': 'EMAIL_ADDRESS'            a child element's text
 *     'address/city': 'ADDRESS_CITY'      a nested element's text
 *
 * Namespace prefixes are ignored. Record n (1-based, in document order) is row n of the report.
 * A field path that matches several elements in one record is a row problem, never a silent pick.
 */
import path from 'node:path';
import { quoteName, reject } from '../inspect/codes.js';
import { decodeUtf8 } from '../inspect/text.js';
import { parseSafeXml, rootOf, type XmlNode } from '../inspect/xml.js';
import { buildRow, planColumns } from './columns.js';
import type { BuildResult, BuiltRow, RowProblem } from './types.js';

export interface XmlPayloadMapping {
  record: string;
  fields: Readonly<Record<string, string>>;
}

export interface XmlRequestOptions {
  workflowId: string;
  fileName: string;
  jobNamePrefix?: string;
}

const segments = (p: string) => p.split('/').filter((s) => s !== '');

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const t = (value as XmlNode)['#text'];
    return t === undefined ? '' : String(t);
  }
  return undefined;
}

/** The text at `fieldPath` inside a record: undefined when absent, an array when repeated. */
function fieldValue(record: unknown, fieldPath: string): string | string[] | undefined {
  let nodes: unknown[] = [record];
  for (const seg of segments(fieldPath)) {
    nodes = nodes.flatMap((n) => {
      if (n === null || typeof n !== 'object') return [];
      const next = (n as XmlNode)[seg];
      if (next === undefined) return [];
      return Array.isArray(next) ? next : [next];
    });
  }
  const texts = nodes.map(textOf).filter((t): t is string => t !== undefined);
  if (texts.length === 0) return undefined;
  return texts.length === 1 ? texts[0] : texts;
}

export function payloadRequestsFromXml(
  input: string | Buffer,
  mapping: XmlPayloadMapping,
  opts: XmlRequestOptions,
): BuildResult {
  const { fileName } = opts;
  const decoded =
    typeof input === 'string' ? { ok: true as const, text: input } : decodeUtf8(input, fileName);
  if (!decoded.ok) return decoded;
  const recordPath = segments(mapping.record);
  const dotted = recordPath.join('.');
  const parsed = parseSafeXml(decoded.text, fileName, (jPath) => jPath === dotted);
  if (!parsed.ok) return parsed;
  const root = rootOf(parsed.doc);
  const [rootName, ...inner] = recordPath;
  if (!root || root.name !== rootName || inner.length === 0) {
    return reject(
      'DOCEX_INPUT_PAYLOAD_MAPPING',
      `${quoteName(fileName)} has root <${root?.name ?? ''}>, but the folder's mapping expects records at ${quoteName(mapping.record)}.`,
    );
  }
  let nodes: unknown[] = [root.node];
  for (const seg of inner) {
    nodes = nodes.flatMap((n) => {
      const next = n !== null && typeof n === 'object' ? (n as XmlNode)[seg] : undefined;
      return next === undefined ? [] : Array.isArray(next) ? next : [next];
    });
  }
  if (nodes.length === 0) {
    return reject(
      'DOCEX_INPUT_NO_RECORDS',
      `${quoteName(fileName)} has no ${quoteName(mapping.record)} records.`,
    );
  }
  const fieldPaths = Object.keys(mapping.fields);
  // Field paths stand for column names, so reports name the XML path the value came from.
  const planned = planColumns(fieldPaths, { fileName, mapping: mapping.fields });
  if (!planned.ok) return planned;
  const stem = path.basename(fileName, path.extname(fileName));
  const rows = nodes.map((record, i): BuiltRow => {
    const row = i + 1;
    const problems: RowProblem[] = [];
    const cells = fieldPaths.map((f) => {
      const v = fieldValue(record, f);
      if (Array.isArray(v)) {
        problems.push({ rule: 'format', field: f, message: `appears ${v.length} times in the record` });
        return '';
      }
      return v ?? '';
    });
    if (problems.length > 0) return { row, problems };
    return buildRow(planned.plan, cells, {
      row,
      workflowId: opts.workflowId,
      jobName: `${opts.jobNamePrefix ?? ''}${fileName} record ${row}`,
      filename: `${stem}-record-${row}.docx`,
    });
  });
  return { ok: true, unit: 'record', rows };
}
