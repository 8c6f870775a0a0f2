/**
 * Where a PDF workflow finds its recipient: each of the input source's `channelIdentifiers` names a
 * kind and the label that precedes its value in the document's text ("Email: jane@example.com").
 * The service reads them from the text of every page; a PDF without one cannot be sent.
 */
import { kindName, type NamesProfile } from '../../domain/names-profile.js';
import type { ChannelIdentifier, Issue } from '../../domain/wire.js';
import type { PdfTextExtractor } from './pdf-text.js';

export interface PdfIdentifierRule {
  kind: string;
  /** What the line holding the value begins with (case-insensitive); the rest of the line is the value. */
  label: string;
}

/** How the PDFs of one upload are read: the workflow's rules, the reader, the names to report in. */
export interface PdfReading {
  rules: readonly PdfIdentifierRule[];
  extractor: PdfTextExtractor;
  names: NamesProfile;
}

/** The rules of a workflow's input source; items without a kind and a label are not rules. */
export function pdfIdentifierRules(inputSource: Record<string, unknown>): PdfIdentifierRule[] {
  const items = inputSource['channelIdentifiers'];
  if (!Array.isArray(items)) return [];
  return items.flatMap((item: unknown) => {
    const { kind, label } = (item ?? {}) as Record<string, unknown>;
    return typeof kind === 'string' && typeof label === 'string' && label.trim() !== ''
      ? [{ kind, label: label.trim() }]
      : [];
  });
}

function valueAfter(pages: readonly string[], label: string): string | undefined {
  const wanted = label.toLowerCase();
  for (const page of pages) {
    for (const line of page.split('\n')) {
      const text = line.trim();
      // The line must begin with the label: "Street:" is not found in "Street number: 12".
      if (!text.toLowerCase().startsWith(wanted)) continue;
      const value = text.slice(label.length).trim();
      if (value !== '') return value;
    }
  }
  return undefined;
}

/** Each rule's value (the rest of the first line that begins with its label and has one), or that it is missing. */
export function findIdentifiers(
  pages: readonly string[],
  rules: readonly PdfIdentifierRule[],
): { found: ChannelIdentifier[]; missing: PdfIdentifierRule[] } {
  const found: ChannelIdentifier[] = [];
  const missing: PdfIdentifierRule[] = [];
  for (const rule of rules) {
    const value = valueAfter(pages, rule.label);
    if (value === undefined) missing.push(rule);
    else found.push({ kind: rule.kind, value });
  }
  return { found, missing };
}

/** The error of a sending event whose PDF lacks identifiers, each named in the profile's spelling. */
export function missingIdentifiersError(
  document: string,
  missing: readonly PdfIdentifierRule[],
  names: NamesProfile,
): Issue {
  const list = missing.map((r) => `${kindName(r.kind, names)} (label "${r.label}")`).join(', ');
  return {
    code: 'CHANNEL_IDENTIFIER_NOT_FOUND',
    message: `${document}: channel identifier ${list} not found in the text of the document`,
  };
}
