/**
 * XML is checked without ever expanding an entity: any DOCTYPE or ENTITY declaration is rejected
 * before a parser sees the text (billion laughs, external entities reading local files), and the
 * parser runs with entity processing off.
 */
import type { X2jOptions } from 'fast-xml-parser';
import { isDocexError } from '../../core/errors.js';
import { lazyRequire } from '../../core/lazy-require.js';
import { readUblSummary } from '../../domain/ubl.js';
import { type InputRejection, quoteName, reject } from './codes.js';
import { overLimit, parseLimits } from './limits.js';
import { decodeUtf8 } from './text.js';

const xml = lazyRequire<typeof import('fast-xml-parser')>('fast-xml-parser');

export type XmlNode = Record<string, unknown>;

/** Parser options shared by every XML reader of the pipeline: no entities, text kept as written. */
export const SAFE_XML_OPTIONS: Readonly<X2jOptions> = {
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  processEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  trimValues: true,
};

const LT = 0x3c;
const GT = 0x3e;
const EQ = 0x3d;
const QUOTE = 0x22;
const APOS = 0x27;

/**
 * Elements and attributes of XML text, counted in one pass without building anything; stops
 * counting once either passes its limit. Comments, CDATA and processing instructions are skipped.
 */
export function countXmlNodes(
  text: string,
  limits: { elements: number; attributes: number },
): { elements: number; attributes: number } {
  let elements = 0;
  let attributes = 0;
  let i = text.indexOf('<');
  while (i !== -1 && i < text.length) {
    const next = text.charCodeAt(i + 1);
    if (text.startsWith('<!--', i)) i = skipPast(text, '-->', i);
    else if (text.startsWith('<![CDATA[', i)) i = skipPast(text, ']]>', i);
    else if (next === 0x3f /* ? */ || next === 0x21 /* ! */ || next === 0x2f /* / */)
      i = skipPast(text, '>', i);
    else {
      elements += 1;
      let quote = 0;
      let j = i + 1;
      for (; j < text.length; j++) {
        const c = text.charCodeAt(j);
        if (quote !== 0) {
          if (c === quote) quote = 0;
        } else if (c === QUOTE || c === APOS) quote = c;
        else if (c === EQ) attributes += 1;
        else if (c === GT || c === LT) break;
      }
      if (elements > limits.elements || attributes > limits.attributes) break;
      i = j;
    }
    i = text.indexOf('<', i);
  }
  return { elements, attributes };
}

function skipPast(text: string, end: string, from: number): number {
  const at = text.indexOf(end, from + 1);
  return at === -1 ? -1 : at + end.length;
}

/** Rejects DTDs and more elements or attributes than allowed, and checks well-formedness; pure. */
export function checkXmlText(text: string, fileName: string): { ok: true } | InputRejection {
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text)) {
    return reject(
      'DOCEX_INPUT_XML_DTD',
      `${quoteName(fileName)} contains a DOCTYPE or ENTITY declaration, which is refused for safety ` +
        '(entity expansion, external entities); export the XML without a DTD.',
    );
  }
  const { xmlElements, xmlAttributes } = parseLimits();
  const nodes = countXmlNodes(text, { elements: xmlElements, attributes: xmlAttributes });
  if (nodes.elements > xmlElements) return overLimit(fileName, 'has a number of elements', 'xmlElements');
  if (nodes.attributes > xmlAttributes)
    return overLimit(fileName, 'has a number of attributes', 'xmlAttributes');
  const valid = xml().XMLValidator.validate(text);
  if (valid !== true) {
    return reject(
      'DOCEX_INPUT_XML_MALFORMED',
      `${quoteName(fileName)} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}).`,
      { line: valid.err.line },
    );
  }
  return { ok: true };
}

/** Parses checked XML into plain objects; a pathological nesting depth becomes a rejection. */
export function parseSafeXml(
  text: string,
  fileName: string,
  /** Called with the dotted path of an element (`root.record`); true makes it always an array. */
  isArray?: (jPath: string) => boolean,
): { ok: true; doc: XmlNode } | InputRejection {
  const checked = checkXmlText(text, fileName);
  if (!checked.ok) return checked;
  try {
    const options: X2jOptions = { ...SAFE_XML_OPTIONS };
    if (isArray)
      options.isArray = (_tag, jPath, _leaf, isAttribute) => !isAttribute && isArray(String(jPath));
    const parser = new (xml().XMLParser)(options);
    return { ok: true, doc: parser.parse(text) as XmlNode };
  } catch (err) {
    const message = (err as Error).message;
    // fast-xml-parser refuses element names that would reach a prototype (__proto__, constructor).
    if (message.startsWith('[SECURITY]')) {
      return reject(
        'DOCEX_INPUT_UNSAFE_KEY',
        `${quoteName(fileName)} has an element name that is refused: ${message.replace('[SECURITY] ', '')}.`,
      );
    }
    return reject(
      'DOCEX_INPUT_XML_MALFORMED',
      `${quoteName(fileName)} could not be parsed as XML: ${message}.`,
    );
  }
}

export function rootOf(doc: XmlNode): { name: string; node: unknown } | undefined {
  const name = Object.keys(doc).find((k) => !k.startsWith('?') && !k.startsWith('#'));
  return name === undefined ? undefined : { name, node: doc[name] };
}

/** A data XML file (DATA_FILE) or a UBL document, from its bytes. */
export function inspectXmlBytes(
  bytes: Buffer,
  fileName: string,
  expect: 'data' | 'ubl',
): { ok: true; details: Record<string, unknown> } | InputRejection {
  const decoded = decodeUtf8(bytes, fileName);
  if (!decoded.ok) return decoded;
  if (expect === 'ubl') {
    const checked = checkXmlText(decoded.text, fileName);
    if (!checked.ok) return checked;
    try {
      return { ok: true, details: { ubl: readUblSummary(decoded.text) } };
    } catch (err) {
      const why = isDocexError(err) ? err.message : String(err);
      return reject('DOCEX_INPUT_NOT_UBL', `${quoteName(fileName)} is not a usable UBL document: ${why}.`);
    }
  }
  const parsed = parseSafeXml(decoded.text, fileName);
  if (!parsed.ok) return parsed;
  const root = rootOf(parsed.doc);
  if (!root) return reject('DOCEX_INPUT_XML_MALFORMED', `${quoteName(fileName)} has no root element.`);
  const node = root.node;
  const records =
    node !== null && typeof node === 'object'
      ? Object.entries(node as XmlNode)
          .filter(([k]) => !k.startsWith('@') && k !== '#text')
          .reduce((n, [, v]) => n + (Array.isArray(v) ? v.length : 1), 0)
      : 0;
  if (records === 0) {
    return reject(
      'DOCEX_INPUT_NO_RECORDS',
      `${quoteName(fileName)} has a root <${root.name}> but no records.`,
    );
  }
  return { ok: true, details: { root: root.name, records } };
}
