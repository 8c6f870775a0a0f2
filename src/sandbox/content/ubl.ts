import path from 'node:path';
import { isDocexError } from '../../core/errors.js';
import { readUblSummary } from '../../domain/ubl.js';
import type { ItemOrProblem } from './types.js';

/** UBL: one item per Invoice or CreditNote, sent to the customer's Peppol participant id. */
export function ublItem(data: Buffer, name: string): ItemOrProblem {
  try {
    const summary = readUblSummary(data.toString('utf8'));
    if (summary.documentType !== 'Invoice' && summary.documentType !== 'CreditNote') {
      return `${name} is not a UBL Invoice or CreditNote`;
    }
    return {
      sourceRef: name,
      recipient: summary.receiverId,
      outcomeHint: [name, summary.receiverId, summary.documentNumber, summary.receiverName].join(' '),
      original: { name: path.basename(name), contentType: 'application/xml', data },
    };
  } catch (err) {
    if (isDocexError(err)) return `${name}: ${err.message}`;
    throw err;
  }
}
