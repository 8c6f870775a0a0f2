/**
 * The text layer of a PDF, page by page, as the service reads it to find a PDF workflow's channel
 * identifiers (textExtractionMethod TEXT_LAYER). pdfjs-dist (Mozilla's PDF reader; text needs no
 * canvas) runs in a worker thread of its own, started on first use by the upload reader's worker
 * (upload-reader-worker.ts) and ended with it, so that:
 * - parsing never blocks the sandbox's event loop, which under `npm start` and in benchmarks is the
 *   agent's own process;
 * - an uploaded file, hostile or not, is bounded in memory (resourceLimits) and in time (the worker
 *   is ended and the next file starts a fresh one).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

export interface PdfTextExtractor {
  /**
   * The text of each page, lines ending in "\n"; reading stops after the page by which a line has
   * begun with each of `stopWhenFound` (compared case-insensitively).
   */
  pages(data: Uint8Array, stopWhenFound: readonly string[]): Promise<string[]>;
  /** Ends the worker; a later call starts a new one. */
  close(): Promise<void>;
}

export interface PdfTextOptions {
  /** Longest time one file may take (default 30 s). */
  timeoutMs?: number;
  /** Heap of the worker (default 512 MiB). */
  maxHeapMb?: number;
}

// Plain JavaScript, so the same worker runs under tsx, vitest and the built dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// pdfjs warns on the console about the canvas it needs only to render: silence this thread only.
console.log = () => {};
console.warn = () => {};
const pdfjs = import(workerData.pdfjsUrl);
parentPort.on('message', async ({ id, data, stopWhenFound }) => {
  let doc;
  try {
    const { getDocument } = await pdfjs;
    doc = await getDocument({
      data,
      isEvalSupported: false,
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
    }).promise;
    const wanted = new Set(stopWhenFound.map((s) => s.toLowerCase()));
    const pages = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      const text = content.items.map((i) => ('str' in i ? i.str + (i.hasEOL ? '\\n' : '') : '')).join('');
      pages.push(text.endsWith('\\n') ? text : text + '\\n');
      page.cleanup();
      for (const line of text.split('\\n')) {
        const start = line.trim().toLowerCase();
        for (const w of wanted) if (start.startsWith(w)) wanted.delete(w);
      }
      if (stopWhenFound.length > 0 && wanted.size === 0) break;
    }
    parentPort.postMessage({ id, pages });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  } finally {
    if (doc) await doc.destroy().catch(() => {});
  }
});
`;

interface Pending {
  resolve(pages: string[]): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

function pdfjsUrl(): string {
  // The legacy build runs on every supported Node version (the modern one needs newer built-ins).
  return pathToFileURL(createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.mjs')).href;
}

export function createPdfTextExtractor(options: PdfTextOptions = {}): PdfTextExtractor {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pending = new Map<number, Pending>();
  let worker: Worker | undefined;
  let nextId = 0;

  const failAll = (err: Error) => {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(err);
    }
  };

  const start = (): Worker => {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pdfjsUrl: pdfjsUrl() },
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 512 },
      stdout: true,
      stderr: true,
    });
    // Its console is for pdfjs's own chatter, never ours.
    w.stdout.resume();
    w.stderr.resume();
    w.unref();
    w.on('message', (m: { id: number; pages?: string[]; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.pages) p.resolve(m.pages);
      else p.reject(new Error(m.error ?? 'no text'));
    });
    const gone = (err: Error) => {
      if (worker === w) worker = undefined;
      failAll(err);
    };
    w.on('error', gone);
    w.on('exit', (code) => gone(new Error(`the PDF reader stopped (exit code ${code})`)));
    return w;
  };

  return {
    pages(data, stopWhenFound) {
      worker ??= start();
      const w = worker;
      const id = nextId++;
      return new Promise<string[]>((resolve, reject) => {
        const timer = setTimeout(() => {
          // A file that takes this long takes the worker with it; the next file gets a new one.
          if (worker === w) worker = undefined;
          pending.delete(id);
          reject(new Error(`reading the text took longer than ${timeoutMs} ms`));
          void w.terminate();
        }, timeoutMs);
        timer.unref();
        pending.set(id, { resolve, reject, timer });
        // A copy: the caller keeps its buffer (the original document is stored from it).
        w.postMessage({ id, data: new Uint8Array(data), stopWhenFound: [...stopWhenFound] });
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
