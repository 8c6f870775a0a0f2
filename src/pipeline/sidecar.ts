/**
 * payload-pdf folders, sidecar pairing: `letter.pdf` travels with `letter.json` (the extension is
 * configurable). The sidecar is claimed like any file but is not an item of its own: its PDF's item
 * reads it from `.processing/` and moves it along to the archive or error folder.
 * Pairing index-csv works the other way round: the PDFs are the companions, claimed but not items;
 * the index file that names them takes them along (payload-pdf-batch.ts).
 */
import path from 'node:path';
import type { FolderRuntime } from './types.js';

export function usesSidecars(runtime: FolderRuntime): boolean {
  return runtime.mode === 'payload-pdf' && runtime.config.payloadPdf.pairing === 'sidecar';
}

/** A claimed file that is not an item of its own: a sidecar, or a PDF waiting for its index. */
export function isSidecarName(runtime: FolderRuntime, name: string): boolean {
  const ext = path.extname(name).toLowerCase();
  if (runtime.mode === 'payload-pdf' && runtime.config.payloadPdf.pairing === 'index-csv')
    return ext === '.pdf';
  return usesSidecars(runtime) && ext === runtime.config.payloadPdf.sidecarExtension.toLowerCase();
}

/** `.processing/letter.pdf` → `.processing/letter.json`. */
export function sidecarPathOf(runtime: FolderRuntime, pdfPath: string): string {
  const stem = path.basename(pdfPath, path.extname(pdfPath));
  return path.join(path.dirname(pdfPath), `${stem}${runtime.config.payloadPdf.sidecarExtension}`);
}
