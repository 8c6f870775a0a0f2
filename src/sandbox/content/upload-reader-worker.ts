/**
 * The upload reader's worker thread: reads one uploaded file per message into its spool (pack and
 * item lines) and answers how many items it holds, or why the file cannot be read. Running out of
 * memory or time ends the thread, which the pool reports as the limit hit. The text of PDFs is
 * read by pdfjs in a thread of this worker's own, ended with it.
 */
import { parentPort } from 'node:worker_threads';
import { createPdfTextExtractor, type PdfTextExtractor } from './pdf-text.js';
import { type SpoolTask, spoolUpload } from './spool.js';

const port = parentPort;
if (!port) throw new Error('the upload reader runs in a worker thread');

// Parsers talk on the console (pdf-lib: "Trying to parse invalid object", thousands of times for
// a junk PDF, with numbers read from the file): silenced in this thread, as pdf-text.ts does.
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) console[level] = () => {};

// Loaded now, not at the first PDF: the time limit counts the reading, not the module load.
await import('pdf-lib');

let extractor: PdfTextExtractor | undefined;

port.on('message', async (m: { task: 'spool'; args: [SpoolTask] }) => {
  try {
    const { paths, pdf, ...upload } = m.args[0];
    if (pdf) extractor ??= createPdfTextExtractor();
    const input = pdf && extractor ? { ...upload, pdf: { ...pdf, extractor } } : upload;
    port.postMessage({ value: await spoolUpload(input, paths) });
  } catch (err) {
    const e = err as Error & { code?: unknown };
    port.postMessage({
      error: { message: e.message ?? String(err), ...(typeof e.code === 'string' ? { code: e.code } : {}) },
    });
  }
});
port.postMessage({ ready: true });
