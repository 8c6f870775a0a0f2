/**
 * The text lines by which the seeded PDF workflows find their recipients (PDF_LABELS in the
 * sandbox's seed): test PDFs carry them, so a test about something else still sends a PDF the
 * service can deliver.
 */
import { PDF_LABELS } from '../../src/sandbox/seed.js';

const VALUES: Record<string, string> = {
  EMAIL_ADDRESS: 'recipient@example.com',
  ADDRESS_COMPANY_NAME: 'Acme NV',
  ADDRESS_STREET: 'Kerkstraat',
  ADDRESS_STREET_NUMBER: '1',
  ADDRESS_POSTAL_CODE: '1000',
  ADDRESS_CITY: 'Brussel',
  ADDRESS_COUNTRY_CODE: 'BE',
  COMPANY_IDENTIFICATION_NUMBER: '0123456749',
  DOCPORTAL_TOKEN_SET_VALUE1: 'TOKEN-1',
  DOCPORTAL_TOKEN_SET_VALUE2: 'TOKEN-2',
};

/** One "label value" line per identifier any seeded PDF workflow looks for, each label once. */
export function recipientLines(overrides: Record<string, string> = {}): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const rule of Object.values(PDF_LABELS).flat()) {
    if (seen.has(rule.label)) continue;
    seen.add(rule.label);
    lines.push(`${rule.label} ${overrides[rule.kind] ?? VALUES[rule.kind]}`);
  }
  return lines;
}
