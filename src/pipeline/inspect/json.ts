/** A JSON file (payload-word requests, payload-pdf sidecar): UTF-8, an object or an array of objects. */
import { type InputRejection, isUnsafeKey, quoteName, reject } from './codes.js';
import { decodeUtf8 } from './text.js';

/**
 * Deepest nesting of arrays and objects accepted. JSON.parse copes with any depth, but what comes
 * after it recurses (JSON.stringify of the job request, schema checks): 100,000 levels exhaust the
 * stack and the file would be retried forever. Real payloads nest a handful of levels.
 */
export const MAX_JSON_DEPTH = 100;

/** Nesting depth of JSON text, counted without recursion; stops counting once over `limit`. */
export function jsonNestingDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > max) max = depth;
      if (max > limit) return max;
    } else if (c === 0x5d || c === 0x7d) {
      depth -= 1;
    }
  }
  return max;
}

/** A rejection when JSON text nests deeper than MAX_JSON_DEPTH; pure. */
export function checkJsonDepth(text: string, fileName: string): InputRejection | undefined {
  if (jsonNestingDepth(text, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH) return undefined;
  return reject(
    'DOCEX_INPUT_JSON_MALFORMED',
    `${quoteName(fileName)} nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`,
    { maxDepth: MAX_JSON_DEPTH },
  );
}

/** A decimal number's value as `<sign><digits>e<exponent>`, without leading or trailing zeros. */
function decimalOf(token: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!m) return token;
  const all = `${m[2]}${m[3] ?? ''}`.replace(/^0+/, '');
  if (all === '') return '0';
  const digits = all.replace(/0+$/, '');
  const exponent = Number(m[4] ?? 0) - (m[3]?.length ?? 0) + (all.length - digits.length);
  return `${m[1]}${digits}e${exponent}`;
}

/**
 * The first number of JSON text that a JavaScript number cannot hold exactly (more significant
 * digits than a double keeps, out of range): `12345678901234567890123` would be sent as
 * `1.2345678901234568e+22`, `1e400` as `null`.
 */
export function firstInexactNumber(text: string): string | undefined {
  const number = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      number.lastIndex = i;
      const token = number.exec(text)?.[0];
      if (!token) continue;
      const value = Number(token);
      if (!Number.isFinite(value) || decimalOf(token) !== decimalOf(String(value))) return token;
      i += token.length - 1;
    }
  }
  return undefined;
}

/** The first key named __proto__, constructor or prototype, walked without recursion. */
function firstUnsafeKey(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) stack.push(...node);
    else {
      for (const [key, child] of Object.entries(node)) {
        if (isUnsafeKey(key)) return key;
        stack.push(child);
      }
    }
  }
  return undefined;
}

/** A key an object of JSON text names twice: JSON.parse keeps the last value without a word. */
export interface DuplicateKey {
  /** The top-level array's item (1-based), or 1 when the text is one object. */
  item: number;
  /** Keys and indexes from the item down to the repeated key, the key last. */
  path: (string | number)[];
  key: string;
}

type KeyFrame = { keys: Set<string>; key: string | undefined } | { index: number };

/** Index of the quote that closes the string opening at `start`, escapes skipped. */
function stringEnd(text: string, start: number): number {
  let at = text.indexOf('"', start + 1);
  while (at !== -1) {
    let backslashes = 0;
    for (let j = at - 1; text.charCodeAt(j) === 0x5c; j--) backslashes += 1;
    if (backslashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

/**
 * The keys named twice in one object of valid JSON text (at most `max`), found by one pass over its
 * tokens, not a second parse: one set of keys per object still open (at most MAX_JSON_DEPTH levels
 * once parseJsonText accepted the text), holding the keys of those objects only. A key
 * written with escapes (`"\u0076alue"`) is decoded first: JSON.parse takes it for `"value"`.
 */
export function findDuplicateKeys(text: string, max = 100): DuplicateKey[] {
  const out: DuplicateKey[] = [];
  const stack: KeyFrame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (expectKey && top !== undefined && 'keys' in top) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) {
          const first = stack[0];
          const inArray = first !== undefined && 'index' in first;
          const frames = inArray ? stack.slice(1) : stack;
          const path = frames.map((f) => ('index' in f ? f.index : (f.key as string)));
          path[path.length - 1] = key;
          out.push({ item: inArray ? first.index + 1 : 1, path, key });
          if (out.length >= max) return out;
        }
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      stack.push({ keys: new Set(), key: undefined });
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push({ index: 0 });
      expectKey = false;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top !== undefined && 'index' in top) top.index += 1;
      else expectKey = true;
    }
  }
  return out;
}

/**
 * JSON text as plain values: rejected when malformed, nested deeper than MAX_JSON_DEPTH, or holding
 * a key that could reach a prototype once the value is copied or merged.
 */
export function parseJsonText(text: string, fileName: string): { ok: true; value: unknown } | InputRejection {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    return reject(
      'DOCEX_INPUT_JSON_MALFORMED',
      `${quoteName(fileName)} is not valid JSON: ${(err as Error).message}.`,
    );
  }
  // After the parse: the depth count trusts the text to be valid JSON (strings closed).
  const tooDeep = checkJsonDepth(text, fileName);
  if (tooDeep) return tooDeep;
  const inexact = firstInexactNumber(text);
  if (inexact !== undefined) {
    const shown = inexact.length > 40 ? `${inexact.slice(0, 40)}…` : inexact;
    return reject(
      'DOCEX_INPUT_JSON_NUMBER',
      `${quoteName(fileName)} holds the number ${shown}, which cannot be sent exactly (too many digits or out of range); write it as a string ("${shown}").`,
      { number: shown },
    );
  }
  const unsafe = firstUnsafeKey(value);
  if (unsafe !== undefined) {
    return reject(
      'DOCEX_INPUT_UNSAFE_KEY',
      `${quoteName(fileName)} has a key named ${quoteName(unsafe)}, which is refused.`,
      { key: unsafe },
    );
  }
  return { ok: true, value };
}

export function inspectJsonBytes(
  bytes: Buffer,
  fileName: string,
): { ok: true; details: Record<string, unknown> } | InputRejection {
  const decoded = decodeUtf8(bytes, fileName);
  if (!decoded.ok) return decoded;
  const parsed = parseJsonText(decoded.text, fileName);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  const items = Array.isArray(value) ? value : [value];
  if (items.some((v) => v === null || typeof v !== 'object' || Array.isArray(v))) {
    return reject(
      'DOCEX_INPUT_JSON_MALFORMED',
      `${quoteName(fileName)} must hold a JSON object or an array of objects.`,
    );
  }
  if (items.length === 0)
    return reject('DOCEX_INPUT_NO_RECORDS', `${quoteName(fileName)} is an empty JSON array.`);
  return { ok: true, details: { items: items.length } };
}
