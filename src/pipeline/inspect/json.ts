/** A JSON file (payload-word requests, payload-pdf sidecar): UTF-8, an object or an array of objects. */
import { type InputRejection, quoteName, reject } from './codes.js';
import { decodeUtf8 } from './text.js';

export function inspectJsonBytes(
  bytes: Buffer,
  fileName: string,
): { ok: true; details: Record<string, unknown> } | InputRejection {
  const decoded = decodeUtf8(bytes, fileName);
  if (!decoded.ok) return decoded;
  let value: unknown;
  try {
    value = JSON.parse(decoded.text);
  } catch (err) {
    return reject(
      'DOCEX_INPUT_JSON_MALFORMED',
      `${quoteName(fileName)} is not valid JSON: ${(err as Error).message}.`,
    );
  }
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
