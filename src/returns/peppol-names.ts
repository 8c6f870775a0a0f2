/**
 * File names of saved Peppol documents: `<senderId>_<documentNumber>_<id>.xml`, with values read
 * from the UBL itself. Pure. The parts come from outside (a sender writes its own document number),
 * so each is reduced to characters every file system and SFTP server accepts.
 */

const PART_MAX = 80;

/**
 * One name part: letters, digits, `.`, `_`, `-` kept; anything else (`:`, `/`, `\`, spaces,
 * control characters, non-ASCII) becomes `-`; runs collapse; no leading dot or dash (hidden files,
 * options), at most 80 characters; empty → `unknown`. `_` stays so a service id is kept as it is;
 * the .json summary, not the name, is what an ERP should parse.
 */
export function sanitizePart(value: string): string {
  const cleaned = value
    .normalize('NFKD')
    // Accents come apart as combining marks: drop them, so é gives e.
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.-]+/, '')
    .replace(/[.-]+$/, '')
    .slice(0, PART_MAX)
    .replace(/[.-]+$/, '');
  return cleaned === '' ? 'unknown' : cleaned;
}

export interface PeppolFileNames {
  /** Base name without extension. */
  stem: string;
  xml: string;
  json: string;
}

export function peppolFileNames(parts: {
  senderId: string;
  documentNumber: string;
  id: string;
}): PeppolFileNames {
  const stem = [parts.senderId, parts.documentNumber, parts.id].map(sanitizePart).join('_');
  return { stem, xml: `${stem}.xml`, json: `${stem}.json` };
}
