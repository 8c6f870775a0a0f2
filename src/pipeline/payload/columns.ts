/**
 * The column grammar of payload rows (CSV, payload-pdf index.csv, and XML fields once mapped):
 *
 *   <KIND>               a channel identifier of that kind (EMAIL_ADDRESS, ADDRESS_CITY, ...; any case)
 *   encrypt.<KIND>       yes/no: mustBeEncrypted on that kind's identifiers
 *   extra.<name>         an extra info identifier named <name>
 *   encrypt.extra.<name> yes/no: mustBeEncrypted on that extra info identifier
 *   data.<a.b.c>         templateData, the dotted path making nested objects ({a: {b: {c}}})
 *   jobName, filename, sendingEventExecutionDateUtc   the request fields, overriding the defaults
 *   executionDate        the same as sendingEventExecutionDateUtc: when the service sends the row;
 *                        ISO 8601 with its offset (2026-12-01T09:00:00+01:00 or …Z), sent in UTC
 *   file                 (payload-pdf index.csv only) the PDF the row belongs to
 *
 * A per-folder `mapping` renames ERP columns to these names first; mapping a column to null
 * ignores it. Any other column rejects the file, so a typo (EMAIL_ADRESS) is not silently dropped.
 * Cells are trimmed; an empty cell adds nothing. Yes/no cells take yes/y/true/1/x and no/n/false/0.
 */
import { isoTime } from '../../core/clock.js';
import { parseExecutionDate } from '../../core/send-window.js';
import { CHANNEL_IDENTIFIER_KINDS, canonicalKind, type PayloadJobRequest } from '../../domain/wire.js';
import { type InputRejection, isUnsafeKey, quoteName, reject } from '../inspect/codes.js';
import { MAX_JSON_DEPTH } from '../inspect/json.js';
import { textProblemsOf } from './row-text.js';
import type { BuiltRow, RowProblem } from './types.js';

export type ColumnMapping = Readonly<Record<string, string | null>>;

type Target =
  | { type: 'kind'; kind: string }
  | { type: 'encrypt'; kind: string }
  | { type: 'extra'; name: string }
  | { type: 'encryptExtra'; name: string }
  | { type: 'data'; path: string[] }
  | { type: 'field'; field: 'jobName' | 'filename' | 'sendingEventExecutionDateUtc' | 'file' }
  | { type: 'ignore' };

export interface ColumnPlan {
  columns: { source: string; target: Target }[];
}

const KINDS = new Set<string>(CHANNEL_IDENTIFIER_KINDS);
const FIELDS = ['jobName', 'filename', 'sendingEventExecutionDateUtc'] as const;
/** The friendly name of sendingEventExecutionDateUtc (one of the two per file). */
const EXECUTION_DATE_COLUMN = 'executionDate';
const YES = new Set(['yes', 'y', 'true', '1', 'x']);
const NO = new Set(['no', 'n', 'false', '0', '']);

/** data.<path> columns nest at most this deep (the request is JSON: same bound as a JSON file). */
export const MAX_DATA_PATH_SEGMENTS = MAX_JSON_DEPTH - 3;

function targetOf(name: string, allowFile: boolean): Target | undefined {
  const upper = name.toUpperCase();
  if (KINDS.has(upper)) return { type: 'kind', kind: upper };
  if ((FIELDS as readonly string[]).includes(name))
    return { type: 'field', field: name as (typeof FIELDS)[number] };
  if (name === EXECUTION_DATE_COLUMN) return { type: 'field', field: 'sendingEventExecutionDateUtc' };
  if (allowFile && name === 'file') return { type: 'field', field: 'file' };
  const lower = name.toLowerCase();
  if (lower.startsWith('encrypt.extra.') && name.length > 14)
    return { type: 'encryptExtra', name: name.slice(14) };
  if (lower.startsWith('encrypt.') && KINDS.has(upper.slice(8)))
    return { type: 'encrypt', kind: upper.slice(8) };
  if (lower.startsWith('extra.') && name.length > 6) return { type: 'extra', name: name.slice(6) };
  if (lower.startsWith('data.')) {
    const path = name.slice(5).split('.');
    if (path.every((p) => p !== '')) return { type: 'data', path };
  }
  return undefined;
}

/** Reads a header once: every column's meaning, or why the file cannot be read as payload rows. */
export function planColumns(
  header: readonly string[],
  opts: { mapping?: ColumnMapping | undefined; fileName: string; allowFile?: boolean },
): { ok: true; plan: ColumnPlan } | InputRejection {
  const columns: ColumnPlan['columns'] = [];
  const unknown: string[] = [];
  const problems: string[] = [];
  const unsafe: string[] = [];
  const seen = new Set<string>();
  for (const source of header) {
    // Own keys only: a header named "constructor" must not find Object.prototype.constructor.
    const mapped = opts.mapping && Object.hasOwn(opts.mapping, source) ? opts.mapping[source] : source;
    if (mapped === null || mapped === undefined) {
      columns.push({ source, target: { type: 'ignore' } });
      continue;
    }
    const target = targetOf(mapped.trim(), opts.allowFile === true);
    if (!target) {
      unknown.push(source === mapped ? source : `${source} -> ${mapped}`);
      continue;
    }
    // Repeated kinds are fine (two e-mail addresses); anything else named twice is ambiguous.
    const key = target.type === 'kind' ? undefined : `${target.type}:${JSON.stringify(target)}`;
    if (key && seen.has(key)) problems.push(`column ${quoteName(mapped)} appears twice`);
    if (key) seen.add(key);
    if (target.type === 'data' && target.path.some(isUnsafeKey)) {
      unsafe.push(source);
      continue;
    }
    if (target.type === 'data' && target.path.length > MAX_DATA_PATH_SEGMENTS) {
      problems.push(
        `column ${quoteName(mapped.slice(0, 40))}… nests deeper than ${MAX_DATA_PATH_SEGMENTS} levels`,
      );
      continue;
    }
    columns.push({ source, target });
  }
  // encrypt.DOCPORTAL_X applies to a DOCCLE_X column and the other way round: one kind, two spellings.
  const kinds = new Set(
    columns.flatMap((c) => (c.target.type === 'kind' ? [canonicalKind(c.target.kind)] : [])),
  );
  const extras = new Set(columns.flatMap((c) => (c.target.type === 'extra' ? [c.target.name] : [])));
  const paths = columns.flatMap((c) => (c.target.type === 'data' ? [c.target.path] : []));
  for (const c of columns) {
    if (c.target.type === 'encrypt' && !kinds.has(canonicalKind(c.target.kind)))
      problems.push(`${quoteName(c.source)} has no ${c.target.kind} column to apply to`);
    if (c.target.type === 'encryptExtra' && !extras.has(c.target.name))
      problems.push(`${quoteName(c.source)} has no extra.${c.target.name} column to apply to`);
  }
  // Every proper prefix of every path, once: linear in the header (comparing every path with every
  // other took minutes for 120,000 columns).
  const prefixes = new Set<string>();
  for (const p of paths) for (let i = 1; i < p.length; i++) prefixes.add(p.slice(0, i).join('.'));
  for (const p of paths) {
    const dotted = p.join('.');
    if (prefixes.has(dotted)) problems.push(`data.${dotted} is both a value and an object`);
  }
  if (unsafe.length > 0) {
    return reject(
      'DOCEX_INPUT_UNSAFE_KEY',
      `${quoteName(opts.fileName)} has data.<path> columns naming __proto__, constructor or prototype, ` +
        `which are refused: ${unsafe.map(quoteName).join(', ')}.`,
      { columns: unsafe },
    );
  }
  if (unknown.length > 0) {
    return reject(
      'DOCEX_INPUT_PAYLOAD_COLUMNS',
      `${quoteName(opts.fileName)} has columns that are not a channel identifier kind, extra.<name>, data.<path>, ` +
        `encrypt.<KIND> or a request field: ${unknown.map(quoteName).join(', ')}; rename them in the folder's ` +
        'mapping (or map them to null to ignore them).',
      { columns: unknown },
    );
  }
  if (problems.length > 0) {
    return reject('DOCEX_INPUT_PAYLOAD_COLUMNS', `${quoteName(opts.fileName)}: ${problems.join('; ')}.`, {
      problems,
    });
  }
  return { ok: true, plan: { columns } };
}

/** Defined, never assigned: even a key planColumns let through cannot reach a prototype. */
function define(node: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true });
}

function setPath(target: Record<string, unknown>, path: string[], value: string): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (typeof next === 'object' && next !== null) node = next as Record<string, unknown>;
    else {
      const child: Record<string, unknown> = Object.create(null);
      define(node, key, child);
      node = child;
    }
  }
  define(node, path[path.length - 1] as string, value);
}

function yesNo(cell: string, column: string, problems: RowProblem[]): boolean {
  const v = cell.toLowerCase();
  if (YES.has(v)) return true;
  if (!NO.has(v))
    problems.push({ rule: 'format', field: column, column, message: `"${cell}" is not a yes/no value` });
  return false;
}

export interface RowDefaults {
  row: number;
  workflowId: string;
  jobName: string;
  filename: string;
}

/** One row's cells (in header order) as a payload job request, or the row's format problems. */
export function buildRow(plan: ColumnPlan, cells: readonly string[], defaults: RowDefaults): BuiltRow {
  const problems: RowProblem[] = [];
  const request: PayloadJobRequest = {
    workflowId: defaults.workflowId,
    jobName: defaults.jobName,
    filename: defaults.filename,
    payload: { channelIdentifiers: [], extraInfoIdentifiers: [], templateData: {} },
  };
  const channelColumns: string[] = [];
  const extraColumns: string[] = [];
  /** The column of each template data path (and of every object on the way), and of each request field. */
  const dataColumns = new Map<string, string>();
  const fieldColumns = new Map<string, string>();
  const encryptKinds = new Set<string>();
  const encryptExtras = new Set<string>();
  let file: string | undefined;
  plan.columns.forEach(({ source, target }, i) => {
    const cell = (cells[i] ?? '').trim();
    if (target.type === 'encrypt' && yesNo(cell, source, problems))
      encryptKinds.add(canonicalKind(target.kind));
    if (target.type === 'encryptExtra' && yesNo(cell, source, problems)) encryptExtras.add(target.name);
    if (cell === '') return;
    if (target.type === 'kind') {
      request.payload.channelIdentifiers.push({ kind: target.kind, value: cell });
      channelColumns.push(source);
    } else if (target.type === 'extra') {
      request.payload.extraInfoIdentifiers.push({ name: target.name, value: cell });
      extraColumns.push(source);
    } else if (target.type === 'data') {
      setPath(request.payload.templateData as Record<string, unknown>, target.path, cell);
      for (let n = 1; n <= target.path.length; n++) {
        const prefix = target.path.slice(0, n).join('.');
        if (!dataColumns.has(prefix)) dataColumns.set(prefix, source);
      }
    } else if (target.type === 'field' && target.field === 'file') {
      file = cell;
    } else if (target.type === 'field' && target.field === 'sendingEventExecutionDateUtc') {
      const at = parseExecutionDate(cell);
      if (at === undefined) problems.push(executionDateProblem(cell, source));
      else request.sendingEventExecutionDateUtc = isoTime(at);
      fieldColumns.set(target.field, source);
    } else if (target.type === 'field') {
      request[target.field] = cell;
      fieldColumns.set(target.field, source);
    }
  });
  for (const id of request.payload.channelIdentifiers)
    if (encryptKinds.has(canonicalKind(id.kind))) id.mustBeEncrypted = true;
  for (const id of request.payload.extraInfoIdentifiers)
    if (encryptExtras.has(id.name)) id.mustBeEncrypted = true;
  const base = file === undefined ? {} : { file };
  if (problems.length > 0) return { row: defaults.row, problems, ...base };
  const text = textProblemsOf(request, (path) => {
    const [top, list, index] = path;
    if (path.length === 1 && typeof top === 'string') return fieldColumns.get(top);
    if (top !== 'payload') return undefined;
    if (list === 'channelIdentifiers' && typeof index === 'number') return channelColumns[index];
    if (list === 'extraInfoIdentifiers' && typeof index === 'number') return extraColumns[index];
    if (list === 'templateData') return dataColumns.get(path.slice(2).join('.'));
    return undefined;
  });
  if (text.length > 0) return { row: defaults.row, problems: text, ...base };
  const columns = {
    channel: channelColumns,
    extra: extraColumns,
    ...(fieldColumns.size > 0 ? { fields: Object.fromEntries(fieldColumns) } : {}),
  };
  return { row: defaults.row, request, columns, ...base };
}

/** A row's execution date that is not ISO 8601 with its offset, named with its column. */
export function executionDateProblem(cell: string, column: string | undefined): RowProblem {
  const shown = cell.length > 40 ? `${cell.slice(0, 40)}…` : cell;
  return {
    rule: 'format',
    field: 'sendingEventExecutionDateUtc',
    ...(column === undefined ? {} : { column }),
    message: `"${shown}" is not a date-time with its offset (ISO 8601, such as 2026-12-01T09:00:00+01:00 or 2026-12-01T08:00:00Z)`,
    code: 'DOCEX_INPUT_EXECUTION_DATE',
  };
}
