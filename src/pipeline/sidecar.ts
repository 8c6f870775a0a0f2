/**
 * payload-pdf folders, sidecar pairing: `letter.pdf` travels with `letter.json` (the extension is
 * configurable). The sidecar is claimed like any file but is not an item of its own: its PDF's item
 * reads it from `.processing/` and moves it along to the archive or error folder.
 */
import path from 'node:path';
import type { FolderRuntime } from './types.js';

export function usesSidecars(rt: FolderRuntime): boolean {
  return rt.mode === 'payload-pdf' && rt.config.payloadPdf.pairing === 'sidecar';
}

export function isSidecarName(rt: FolderRuntime, name: string): boolean {
  return (
    usesSidecars(rt) &&
    path.extname(name).toLowerCase() === rt.config.payloadPdf.sidecarExtension.toLowerCase()
  );
}

/** `.processing/letter.pdf` → `.processing/letter.json`. */
export function sidecarPathOf(rt: FolderRuntime, pdfPath: string): string {
  const stem = path.basename(pdfPath, path.extname(pdfPath));
  return path.join(path.dirname(pdfPath), `${stem}${rt.config.payloadPdf.sidecarExtension}`);
}
