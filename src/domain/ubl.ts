/**
 * Reads the few fields of a UBL 2.1 invoice or credit note that the sandbox lists and the agent
 * names files after. The parser never expands entities and documents with a DTD are refused, so a
 * "billion laughs" or external-entity document cannot cost memory or leak files.
 */

import { DocexError } from '../core/errors.js';
import { lazyRequire } from '../core/lazy-require.js';

const fxp = lazyRequire<typeof import('fast-xml-parser')>('fast-xml-parser');

export interface UblSummary {
  documentType: 'Invoice' | 'CreditNote' | string;
  documentNumber: string;
  issueDate: string;
  /** Participant id `<scheme>:<value>` of the supplier's EndpointID. */
  senderId: string;
  /** Participant id `<scheme>:<value>` of the customer's EndpointID. */
  receiverId: string;
  senderName: string;
  receiverName: string;
  /** LegalMonetaryTotal/PayableAmount, kept as written. */
  amount: string;
  currency: string;
}

const UBL_NAMESPACE_PREFIX = 'urn:oasis:names:specification:ubl:schema:xsd:';

type XmlNode = Record<string, unknown>;

function invalid(message: string): DocexError {
  return new DocexError('DOCEX_UBL_INVALID', message);
}

function asNode(value: unknown): XmlNode | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first !== null && typeof first === 'object' ? (first as XmlNode) : undefined;
}

function child(node: XmlNode | undefined, ...path: string[]): unknown {
  let current: unknown = node;
  for (const key of path) {
    const n = asNode(current);
    if (!n) return undefined;
    current = n[key];
  }
  return Array.isArray(current) ? current[0] : current;
}

function text(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number') return String(value).trim();
  const n = asNode(value);
  const t = n?.['#text'];
  return typeof t === 'string' || typeof t === 'number' ? String(t).trim() : '';
}

function attr(value: unknown, name: string): string {
  const a = asNode(value)?.[`@_${name}`];
  return typeof a === 'string' ? a.trim() : '';
}

function participantId(party: XmlNode | undefined): string {
  const endpoint = child(party, 'Party', 'EndpointID');
  const value = text(endpoint);
  if (!value) return '';
  const scheme = attr(endpoint, 'schemeID');
  return scheme ? `${scheme}:${value}` : value;
}

function partyName(party: XmlNode | undefined): string {
  return (
    text(child(party, 'Party', 'PartyName', 'Name')) ||
    text(child(party, 'Party', 'PartyLegalEntity', 'RegistrationName'))
  );
}

/** The root element's start tag: its qualified name and attributes (after the prolog and comments). */
function rootStartTag(xml: string): { name: string; attributes: Map<string, string> } | undefined {
  let i = 0;
  for (;;) {
    i = xml.indexOf('<', i);
    if (i === -1) return undefined;
    if (xml.startsWith('<?', i)) i = xml.indexOf('?>', i) + 2;
    else if (xml.startsWith('<!--', i)) i = xml.indexOf('-->', i) + 3;
    else break;
    if (i < 2) return undefined;
  }
  const tag = /^<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/.exec(
    xml.slice(i, i + 65_536),
  );
  if (!tag) return undefined;
  const attributes = new Map<string, string>();
  for (const m of (tag[2] ?? '').matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    attributes.set(m[1] as string, m[2] ?? m[3] ?? '');
  }
  return { name: tag[1] as string, attributes };
}

/**
 * The root element's namespace, as the root declares it for its own prefix (or the default
 * namespace). A UBL URN elsewhere in the file (a comment, an attribute, another element) does not count.
 */
function rootNamespace(xml: string): { local: string; namespace: string | undefined } | undefined {
  const root = rootStartTag(xml);
  if (!root) return undefined;
  const colon = root.name.indexOf(':');
  const prefix = colon === -1 ? undefined : root.name.slice(0, colon);
  const local = colon === -1 ? root.name : root.name.slice(colon + 1);
  return { local, namespace: root.attributes.get(prefix === undefined ? 'xmlns' : `xmlns:${prefix}`) };
}

function parse(xml: string): XmlNode {
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) {
    throw invalid('UBL document refused: it contains a DTD or entity declaration');
  }
  const valid = fxp().XMLValidator.validate(xml);
  if (valid !== true) {
    throw invalid(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  }
  const parser = new (fxp().XMLParser)({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    removeNSPrefix: true,
    processEntities: false,
    parseTagValue: false,
    parseAttributeValue: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
  });
  return parser.parse(xml) as XmlNode;
}

export function readUblSummary(xml: string): UblSummary {
  const doc = parse(xml);
  const rootName = Object.keys(doc).find((k) => !k.startsWith('?') && !k.startsWith('#'));
  const root = rootName ? asNode(doc[rootName]) : undefined;
  if (!rootName || !root) throw invalid('not a UBL document: no root element');

  // removeNSPrefix drops the xmlns attributes, so the namespace is read from the root's start tag.
  const declared = rootNamespace(xml);
  if (declared?.local !== rootName || declared.namespace !== `${UBL_NAMESPACE_PREFIX}${rootName}-2`) {
    throw invalid(`not a UBL document: root <${rootName}> is not in a UBL namespace`);
  }
  const supplier = asNode(child(root, 'AccountingSupplierParty'));
  const customer = asNode(child(root, 'AccountingCustomerParty'));
  const payable = child(root, 'LegalMonetaryTotal', 'PayableAmount');
  const summary: UblSummary = {
    documentType: rootName,
    documentNumber: text(child(root, 'ID')),
    issueDate: text(child(root, 'IssueDate')),
    senderId: participantId(supplier),
    receiverId: participantId(customer),
    senderName: partyName(supplier),
    receiverName: partyName(customer),
    amount: text(payable),
    currency: attr(payable, 'currencyID') || text(child(root, 'DocumentCurrencyCode')),
  };
  const missing = (['documentNumber', 'issueDate', 'senderId', 'receiverId'] as const).filter(
    (k) => !summary[k],
  );
  if (missing.length > 0) {
    throw invalid(`UBL ${rootName} lacks ${missing.join(', ')}`);
  }
  return summary;
}
