/**
 * What is saved for one incoming Peppol document: the file names (from the UBL itself) and the
 * .json summary an ERP routes it by. Pure. A document that is not readable UBL is still described,
 * from the service's record, with the reason in `ublError`.
 */
import { readUblSummary, type UblSummary } from '../domain/ubl.js';
import type { PeppolDocument } from '../domain/wire.js';
import { type PeppolFileNames, peppolFileNames } from './peppol-names.js';

/** The .json written beside each XML: what an ERP needs to route it without parsing UBL. */
export interface PeppolSummaryFile {
  id: string;
  documentType: string;
  documentNumber: string;
  issueDate: string;
  sender: { id: string; name: string };
  receiver: { id: string; name: string };
  amount: string;
  currency: string;
  receivedAt: string;
  xmlFile: string;
  size: number;
  /** Present when the XML could not be read as UBL: the values then come from the service's record. */
  ublError?: string;
}

export function describePeppolDocument(
  doc: PeppolDocument,
  xml: string,
  size: number,
): { summary: PeppolSummaryFile; names: PeppolFileNames; ublError?: string } {
  let ubl: UblSummary | undefined;
  let ublError: string | undefined;
  try {
    ubl = readUblSummary(xml);
  } catch (err) {
    ublError = err instanceof Error ? err.message : String(err);
  }
  const names = peppolFileNames({
    senderId: ubl?.senderId ?? doc.senderId,
    documentNumber: ubl?.documentNumber ?? doc.documentNumber ?? '',
    id: doc.id,
  });
  const summary: PeppolSummaryFile = {
    id: doc.id,
    documentType: ubl?.documentType ?? doc.documentType ?? '',
    documentNumber: ubl?.documentNumber ?? doc.documentNumber ?? '',
    issueDate: ubl?.issueDate ?? doc.issueDate ?? '',
    sender: { id: ubl?.senderId ?? doc.senderId, name: ubl?.senderName ?? '' },
    receiver: { id: ubl?.receiverId ?? doc.receiverId ?? '', name: ubl?.receiverName ?? '' },
    amount: ubl?.amount ?? '',
    currency: ubl?.currency ?? '',
    receivedAt: doc.createdAt,
    xmlFile: names.xml,
    size,
    ...(ublError ? { ublError } : {}),
  };
  return { summary, names, ...(ublError ? { ublError } : {}) };
}
