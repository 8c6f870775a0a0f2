/**
 * The characters a payload job request may carry, checked on every built request before anything
 * is sent. The specification's payload rules say nothing about characters; these rules are ours
 * (issue 29), so a row is refused by the agent with its field named instead of reaching the
 * service with a NUL in a name or a right-to-left override in an e-mail address:
 *
 * - no control character in any value or key: C0 other than tab and line feed (a carriage return
 *   only before a line feed), DEL, C1, and no lone surrogate (a `\ud800` JSON escape);
 * - no line break (LF, CR, U+2028, U+2029) in a one-line field: the request fields, kinds, extra
 *   info names, template data keys, and identifier values other than ADDRESS and INVOICE_DESCRIPTION;
 * - no invisible character (bidi controls, zero-width characters, any other format or
 *   default-ignorable code point) in an identifier: e-mail, phone, Peppol ids, ID numbers, names,
 *   codes, and the request's workflowId, jobName and filename.
 *
 * A problem names the field and the character's code point, never the value.
 */
import { escapeCodePoint } from '../core/escape.js';
import { canonicalKind, type PayloadJobRequest } from './wire.js';

export type PayloadTextProblemKind = 'control' | 'invisible';

export interface PayloadTextProblem {
  kind: PayloadTextProblemKind;
  /** Where in the request: `payload.channelIdentifiers[0].value`, `payload.templateData.name`. */
  field: string;
  /** The same place as keys and indexes, for naming the column a field came from. */
  path: readonly (string | number)[];
  codePoint: number;
  message: string;
}

/** Channel identifier kinds whose value is free text: bidi controls and joiners may be needed there. */
const FREE_TEXT_KINDS: ReadonlySet<string> = new Set([
  'ADDRESS',
  'ADDRESS_STREET',
  'ADDRESS_CITY',
  'INVOICE_DESCRIPTION',
  'INVOICE_COMMUNICATION',
]);
/** Channel identifier kinds whose value may span lines (an unstructured address, a description). */
const MULTI_LINE_KINDS: ReadonlySet<string> = new Set(['ADDRESS', 'INVOICE_DESCRIPTION']);
/** Request fields that identify the job: checked like identifiers. */
const IDENTIFIER_FIELDS: ReadonlySet<string> = new Set(['workflowId', 'jobName', 'filename']);
const ONE_LINE_FIELDS: ReadonlySet<string> = new Set(['sendingEventExecutionDateUtc']);

/** Text: any control character but tab, line feed and a carriage return before a line feed. */
const BAD_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cs}]|\r(?!\n)/u;
/** One line: the same, line breaks included. */
const BAD_IN_LINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\p{Cs}]/u;
/** Identifiers: invisible characters too (format characters and default-ignorable code points). */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/** What a value may hold, from the loosest to the strictest. */
type Rule = 'text' | 'line' | 'identifier';

const CODE_POINT_NAMES: Readonly<Record<number, string>> = {
  0: 'NUL',
  10: 'line feed',
  13: 'carriage return',
  27: 'escape',
  127: 'delete',
  133: 'next line',
  173: 'soft hyphen',
  1564: 'Arabic letter mark',
  8203: 'zero width space',
  8204: 'zero width non-joiner',
  8205: 'zero width joiner',
  8206: 'left-to-right mark',
  8207: 'right-to-left mark',
  8232: 'line separator',
  8233: 'paragraph separator',
  8234: 'left-to-right embedding',
  8235: 'right-to-left embedding',
  8236: 'pop directional formatting',
  8237: 'left-to-right override',
  8238: 'right-to-left override',
  8288: 'word joiner',
  8294: 'left-to-right isolate',
  8295: 'right-to-left isolate',
  8296: 'first strong isolate',
  8297: 'pop directional isolate',
  65279: 'zero width no-break space',
};

/** `U+202E (right-to-left override)`. */
export function describeCodePoint(codePoint: number): string {
  const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
  const name = CODE_POINT_NAMES[codePoint];
  return name === undefined ? `U+${hex}` : `U+${hex} (${name})`;
}

/** A key as a path shows it: plain names dotted, anything else quoted with every odd character escaped. */
function keyStep(key: string): string {
  if (/^[A-Za-z_$][\w$-]*$/.test(key)) return `.${key}`;
  const shown = key.length > 40 ? `${key.slice(0, 40)}…` : key;
  const quoted = JSON.stringify(shown).replace(/[^\x20-\x7e]/gu, escapeCodePoint);
  return `[${quoted}]`;
}

export function fieldOf(path: readonly (string | number)[]): string {
  const shown = path.map((p) => (typeof p === 'number' ? `[${p}]` : keyStep(p))).join('');
  return shown.startsWith('.') ? shown.slice(1) : shown;
}

/** The first character `rule` refuses in `value`, with its 1-based position in code points. */
function firstBad(value: string, rule: Rule): { codePoint: number; at: number; what: string } | undefined {
  const bad = (rule === 'text' ? BAD_IN_TEXT : BAD_IN_LINE).exec(value);
  const invisible = bad === null && rule === 'identifier' ? INVISIBLE.exec(value) : null;
  const m = bad ?? invisible;
  if (m === null) return undefined;
  const codePoint = m[0].codePointAt(0) as number;
  const at = [...value.slice(0, m.index)].length + 1;
  const what =
    invisible !== null
      ? 'an invisible character'
      : codePoint >= 0xd800 && codePoint <= 0xdfff
        ? 'a lone surrogate (half of a character, from a broken \\u escape)'
        : codePoint === 0x0a || codePoint === 0x0d || codePoint === 0x2028 || codePoint === 0x2029
          ? rule === 'text'
            ? 'a carriage return without a line feed'
            : 'a line break'
          : 'a control character';
  return { codePoint, at, what };
}

/** At most this many problems per request: one hostile row does not make a report of megabytes. */
export const MAX_TEXT_PROBLEMS = 20;

/** A place in the request, linked to its parent: the path is built only for a problem. */
interface Step {
  value: unknown;
  parent: Step | undefined;
  key: string | number | undefined;
  depth: number;
  rule: Rule;
  label?: string;
}

function pathOf(step: Step | undefined, last?: string): (string | number)[] {
  const path: (string | number)[] = [];
  for (let s = step; s !== undefined && s.key !== undefined; s = s.parent) path.push(s.key);
  path.reverse();
  if (last !== undefined) path.push(last);
  return path;
}

/** The rule of property `key` of the object at `at`, from where it sits in the request. */
function ruleOf(at: Step, key: string, node: Record<string, unknown>): { rule: Rule; label?: string } {
  if (at.depth === 0) {
    if (IDENTIFIER_FIELDS.has(key)) return { rule: 'identifier' };
    if (ONE_LINE_FIELDS.has(key)) return { rule: 'line' };
    return { rule: 'text' };
  }
  // An item of payload.channelIdentifiers or payload.extraInfoIdentifiers sits at depth 3.
  const list = at.depth === 3 && at.parent?.parent?.key === 'payload' ? at.parent.key : undefined;
  if (list === 'channelIdentifiers') {
    if (key === 'kind') return { rule: 'identifier' };
    if (key === 'value') {
      const kind = typeof node['kind'] === 'string' ? node['kind'] : '';
      const canonical = canonicalKind(kind);
      const rule: Rule = !FREE_TEXT_KINDS.has(canonical)
        ? 'identifier'
        : MULTI_LINE_KINDS.has(canonical)
          ? 'text'
          : 'line';
      // The kind is shown only when it is one: an unknown kind is not echoed.
      return /^[A-Z0-9_]{1,60}$/.test(kind) ? { rule, label: kind } : { rule };
    }
  }
  if (list === 'extraInfoIdentifiers' && key === 'name') return { rule: 'identifier' };
  return { rule: 'text' };
}

/**
 * Every value and key of a payload job request checked against the character rules above; the
 * request is walked without recursion (template data may nest as deep as the JSON limit allows).
 */
export function checkPayloadText(request: PayloadJobRequest): PayloadTextProblem[] {
  const out: PayloadTextProblem[] = [];
  const check = (
    value: string,
    path: () => (string | number)[],
    rule: Rule,
    label?: string,
    isKey = false,
  ) => {
    const bad = firstBad(value, rule);
    if (!bad || out.length >= MAX_TEXT_PROBLEMS) return;
    const at = path();
    const field = fieldOf(at);
    const where = `${isKey ? 'the key ' : ''}${field}${label ? ` (${label})` : ''}`;
    const why =
      bad.what === 'an invisible character'
        ? '; identifiers may not hold bidi controls, zero-width or other invisible characters'
        : bad.what === 'a line break'
          ? '; this field takes one line'
          : '';
    out.push({
      kind: bad.what === 'an invisible character' ? 'invisible' : 'control',
      field,
      path: at,
      codePoint: bad.codePoint,
      message: `${where} holds ${bad.what}, ${describeCodePoint(bad.codePoint)}, at character ${bad.at}${why}`,
    });
  };
  const stack: Step[] = [{ value: request, parent: undefined, key: undefined, depth: 0, rule: 'text' }];
  while (stack.length > 0 && out.length < MAX_TEXT_PROBLEMS) {
    const step = stack.pop() as Step;
    const { value, rule, depth } = step;
    if (typeof value === 'string') check(value, () => pathOf(step), rule, step.label);
    else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], parent: step, key: i, depth: depth + 1, rule });
    } else if (value !== null && typeof value === 'object') {
      const node = value as Record<string, unknown>;
      const keys = Object.keys(node);
      for (const key of keys) check(key, () => pathOf(step, key), 'line', undefined, true);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string;
        const child = ruleOf(step, key, node);
        stack.push({ value: node[key], parent: step, key, depth: depth + 1, ...child });
      }
    }
  }
  return out;
}
