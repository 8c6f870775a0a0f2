import path from 'node:path';
import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';
import { type ContentResult, collect, EMAIL, fail } from './types.js';

type OrderedNode = Record<string, unknown>;
const isElement = (node: OrderedNode) =>
  Object.keys(node).some((k) => !k.startsWith('?') && !k.startsWith('#') && k !== ':@');
const tagOf = (node: OrderedNode) => Object.keys(node).find((k) => k !== ':@') ?? '';

/** XML data file: one item per child element of the root (one record each). */
export function xmlDataItems(data: Buffer, filename: string): ContentResult {
  const text = data.toString('utf8');
  // As for UBL (domain/ubl.ts): no DTD, so no entity can expand or reach outside the file.
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) {
    return fail('UNREADABLE_FILE', `${filename} is refused: it contains a DTD or entity declaration`);
  }
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    return fail(
      'UNREADABLE_FILE',
      `${filename} is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`,
    );
  }
  const options = { preserveOrder: true, ignoreAttributes: false, commentPropName: '#comment' };
  const nodes = new XMLParser(options).parse(text) as OrderedNode[];
  const root = nodes.find(isElement);
  if (!root) return fail('UNREADABLE_FILE', `${filename} has no root element`);
  const children = ((root[tagOf(root)] as OrderedNode[]) ?? []).filter(isElement);
  const builder = new XMLBuilder(options);
  return collect(
    children.map((child, i) => {
      const xml = `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build([child]) as string}`;
      return {
        sourceRef: `${filename}#record=${i + 1}`,
        recipient: EMAIL.exec(xml)?.[0] ?? `${tagOf(child)} ${i + 1}`,
        outcomeHint: xml.replace(/<[^>]*>/g, ' '),
        original: {
          name: `${path.basename(filename, '.xml')}-record-${i + 1}.xml`,
          contentType: 'application/xml',
          data: Buffer.from(xml),
        },
      };
    }),
  );
}
