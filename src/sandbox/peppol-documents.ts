/**
 * Incoming Peppol documents of the sandbox: the UBL XML as a file under blobDir/peppol (the files
 * host serves it at the signed path `/download/peppol/<id>`) and a 'peppol-document' record
 * (decisions, Incoming Peppol documents) indexed by the receiving company.
 */
import path from 'node:path';
import { isoTime } from '../core/clock.js';
import { readUblSummary } from '../domain/ubl.js';
import type { PeppolDocument } from '../domain/wire.js';
import { writeFileAtomicSync } from './atomic-file.js';
import type { SandboxContext } from './context.js';
import { SEED } from './seed-ids.js';

export const PEPPOL_DOCUMENT_KIND = 'peppol-document';

export interface PeppolDocumentRecord extends PeppolDocument {
  companyId: string;
  senderName: string;
  receiverName: string;
  amount: string;
  currency: string;
  [key: string]: unknown;
}

/** Where the XML of a document lives; the files host serves it for `/download/peppol/<id>`. */
export function peppolBlobPath(blobDir: string, id: string): string {
  return path.join(blobDir, 'peppol', `${id}.xml`);
}

/** The signed path on the files host for a document's download URL. */
export function peppolDownloadPath(id: string): string {
  return `/download/peppol/${encodeURIComponent(id)}`;
}

export function toWirePeppolDocument(record: PeppolDocumentRecord): PeppolDocument {
  const { companyId: _companyId, ...wire } = record;
  return wire;
}

export interface AddPeppolDocumentOptions {
  fileName?: string;
  /** Epoch ms of reception; default now. */
  receivedAt?: number;
  /** Send `peppol.document.received` (default true; seeding turns it off). */
  emit?: boolean;
}

/** Stores an incoming document; throws DocexError DOCEX_UBL_INVALID when the XML is not UBL. */
export function addPeppolDocument(
  ctx: SandboxContext,
  xml: string,
  companyId: string = SEED.partnerCompanyId,
  options: AddPeppolDocumentOptions = {},
): PeppolDocumentRecord {
  const summary = readUblSummary(xml);
  const id = ctx.newId('ppl');
  const data = Buffer.from(xml, 'utf8');
  const file = peppolBlobPath(ctx.blobDir, id);
  writeFileAtomicSync(file, data);

  const at = isoTime(options.receivedAt ?? ctx.clock.now());
  const safeNumber = summary.documentNumber.replace(/[^A-Za-z0-9._-]+/g, '_');
  const fileName = options.fileName ?? `${summary.documentType}-${safeNumber}.xml`;
  const record: PeppolDocumentRecord = {
    id,
    senderId: summary.senderId,
    receiverId: summary.receiverId,
    documentType: summary.documentType,
    documentNumber: summary.documentNumber,
    issueDate: summary.issueDate,
    fileName,
    size: data.length,
    createdAt: at,
    lastModifiedAt: at,
    senderName: summary.senderName,
    receiverName: summary.receiverName,
    amount: summary.amount,
    currency: summary.currency,
    companyId,
  };
  ctx.store.insert(PEPPOL_DOCUMENT_KIND, record, { companyId });
  ctx.log.info({ documentId: id, companyId, documentType: summary.documentType }, 'peppol document received');
  if (options.emit !== false) {
    ctx.emit({
      type: 'peppol.document.received',
      companyId,
      data: { documentId: id, senderId: summary.senderId },
    });
  }
  return record;
}
