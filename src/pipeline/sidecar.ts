/**
 * payload-pdf folders, sidecar pairing: `letter.pdf` travels with `letter.json` (the extension is
 * configurable). The sidecar is claimed like any file but is not an item of its own: its PDF's item
 * reads it from `.processing/` and moves it along to the archive or error folder.
 * Pairing index-csv works the other way round: the PDFs are the companions, claimed but not items;
 * the index file that names them takes them along (payload-pdf-batch.ts).
 */
import path from 'node:path';
import type { FolderRuntime } from './types.js';

export function usesSidecars(rt: FolderRuntime): boolean {
  return rt.mode === 'payload-pdf' && rt.config.payloadPdf.pairing === 'sidecar';
}

/** A claimed file that is not an item of its own: a sidecar, or a PDF waiting for its index. */
export function isSidecarName(rt: FolderRuntime, name: string): boolean {
  const ext = path.extname(name).toLowerCase();
  if (rt.mode === 'payload-pdf' && rt.config.payloadPdf.pairing === 'index-csv') return ext === '.pdf';
  return usesSidecars(rt) && ext === rt.config.payloadPdf.sidecarExtension.toLowerCase();
}

/** `.processing/letter.pdf` → `.processing/letter.json`. */
export function sidecarPathOf(rt: FolderRuntime, pdfPath: string): string {
  const stem = path.basename(pdfPath, path.extname(pdfPath));
  return path.join(path.dirname(pdfPath), `${stem}${rt.config.payloadPdf.sidecarExtension}`);
}
