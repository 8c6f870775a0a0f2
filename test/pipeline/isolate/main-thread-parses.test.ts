/**
 * "Nothing that parses dropped bytes runs on the main event loop" (issue 16), pinned on the
 * sources: the functions that take a dropped file's bytes are called from the worker's task table
 * only, and the parser libraries are loaded only where the allow-list below says why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

const FILES = sourceFiles(SRC)
  .map((file) => ({ file: path.relative(path.dirname(SRC), file), text: readFileSync(file, 'utf8') }))
  // The sandbox is the service's emulator: it parses what the agent sends, not what is dropped.
  .filter((f) => !f.file.startsWith('src/sandbox/'));

/** Names imported as values (not `import type`, not `type X` members), by module specifier. */
function valueImports(text: string): Array<{ from: string; names: string[] }> {
  const out: Array<{ from: string; names: string[] }> = [];
  for (const m of text.matchAll(/^import\s+(?!type\s)([\s\S]*?)\s+from\s+'([^']+)';/gm)) {
    const clause = m[1]!;
    const named = clause.match(/\{([\s\S]*)\}/)?.[1] ?? '';
    const names = named
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n && !n.startsWith('type '))
      .map((n) => n.split(/\s+as\s+/)[0]!);
    const def = clause
      .replace(/\{[\s\S]*\}/, '')
      .replace(/,/g, '')
      .trim();
    if (def) names.push(def);
    if (names.length > 0) out.push({ from: m[2]!, names });
  }
  return out;
}

/** Packages loaded at run time: value imports, dynamic import() and lazyRequire('…'). */
function loadedPackages(text: string): string[] {
  const code = text.replace(/typeof import\('[^']+'\)/g, '');
  return [
    ...valueImports(code).map((i) => i.from),
    ...[...code.matchAll(/\bimport\('([^']+)'\)/g)].map((m) => m[1]!),
    ...[...code.matchAll(/lazyRequire<[^>]*>\('([^']+)'\)/g)].map((m) => m[1]!),
  ];
}

/** The functions that take a dropped file's bytes (or its decoded text) and parse them. */
const BYTE_PARSERS = new Set([
  'inspectFile',
  'inspectCsvBytes',
  'inspectJsonBytes',
  'inspectXmlBytes',
  'inspectPdfFile',
  'inspectZipFile',
  'checkPdfBytes',
  'parseCsv',
  'parseJsonText',
  'parseSafeXml',
  'buildPayloadFile',
  'payloadPdfBatchFromIndexCsv',
  'payloadPdfFromSidecar',
]);

const PARSER_PACKAGES = new Set(['pdf-lib', 'papaparse', 'fast-xml-parser', 'yauzl']);

/** Where a parser package may be loaded outside the worker's modules, and why. */
const MAIN_THREAD_ALLOWED: Record<string, string> = {
  // Streams the entries of a batch ZIP the worker already inspected (listing, bomb and path checks).
  'src/pipeline/batch-zip.ts': 'yauzl',
  // Incoming Peppol documents from the service (not dropped files), summarised for the inbox.
  'src/domain/ubl.ts': 'fast-xml-parser',
};

const parseLayer = (file: string) =>
  file.startsWith('src/pipeline/inspect/') || file.startsWith('src/pipeline/payload/');
/** The worker thread's own modules: its entry and the parsers it runs. */
const workerSide = (file: string) =>
  file.startsWith('src/pipeline/inspect/') || file === 'src/pipeline/isolate/worker.ts';

describe('parsing of dropped bytes stays off the main event loop', () => {
  it('calls the byte parsers only from the worker task table (src/pipeline/isolate/tasks.ts)', () => {
    const callers = FILES.filter((f) => !parseLayer(f.file))
      .filter((f) =>
        valueImports(f.text).some(
          (i) => /\/(inspect|payload)\//.test(i.from) && i.names.some((n) => BYTE_PARSERS.has(n)),
        ),
      )
      .map((f) => f.file);
    expect(callers).toEqual(['src/pipeline/isolate/tasks.ts']);
  });

  it('loads pdf-lib, papaparse, fast-xml-parser and yauzl only on the worker side or where allowed, and says why', () => {
    const loaders = FILES.flatMap((f) =>
      loadedPackages(f.text)
        .filter((p) => PARSER_PACKAGES.has(p))
        .map((p) => ({ file: f.file, pkg: p })),
    );
    const outside = loaders.filter((l) => !workerSide(l.file));
    expect(outside).toEqual(
      Object.entries(MAIN_THREAD_ALLOWED)
        .map(([file, pkg]) => ({ file, pkg }))
        .sort((a, b) => a.file.localeCompare(b.file)),
    );
    // The checks of this test see the loads they are meant to see.
    expect(loaders.map((l) => l.pkg).sort()).toEqual(
      expect.arrayContaining(['fast-xml-parser', 'papaparse', 'pdf-lib', 'yauzl']),
    );
  });
});
