/**
 * What the isolated inspector can be asked to do: every parse of a dropped file's bytes. Each task
 * takes and answers plain values (structured clone); a Buffer arrives as a Uint8Array and is
 * wrapped again here.
 */
import { type InspectOptions, inspectFile } from '../inspect/inspect-file.js';
import { buildPayloadFile } from '../payload/build-file.js';
import { type IndexCsvOptions, payloadPdfBatchFromIndexCsv } from '../payload/csv-requests.js';
import { payloadPdfFromSidecar } from '../payload/json-requests.js';

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

type SidecarOptions = Parameters<typeof payloadPdfFromSidecar>[2];

export const TASKS = {
  inspectFile: (opts: InspectOptions) =>
    inspectFile(opts.bytes ? { ...opts, bytes: asBuffer(opts.bytes) } : opts),
  buildPayloadFile,
  buildBatchIndex: async (index: Uint8Array, opts: IndexCsvOptions) =>
    payloadPdfBatchFromIndexCsv(asBuffer(index), opts),
  buildSidecar: async (pdfName: string, sidecar: Uint8Array, opts: SidecarOptions) =>
    payloadPdfFromSidecar(pdfName, asBuffer(sidecar), opts),
};

export type Tasks = typeof TASKS;
export type TaskName = keyof Tasks;
