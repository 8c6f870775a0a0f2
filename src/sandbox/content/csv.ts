import { createReadStream } from 'node:fs';
import path from 'node:path';
import Papa from 'papaparse';
import { type ContentItem, fail, type ItemSink, type ReadResult } from './types.js';

/** One CSV field as Papa.unparse writes it (quoted only when it must be), without its per-call set-up. */
function field(value: string, delimiter: string): string {
  const escaped = value.replaceAll('"', '""');
  const quote =
    /[\r\n"\uFEFF]/.test(value) ||
    escaped.includes(delimiter) ||
    escaped.startsWith(' ') ||
    escaped.endsWith(' ');
  return quote ? `"${escaped}"` : escaped;
}

/**
 * A CSV data file: one item per row, its original the header plus that row. Streamed: each chunk
 * of rows goes to `sink` before the next chunk is read, so a file of a million rows never sits in
 * memory whole.
 */
export function csvItems(filePath: string, filename: string, sink: ItemSink): Promise<ReadResult> {
  const base = path.basename(filename, '.csv');
  let count = 0;
  let delimiterError: string | undefined;
  let header: { fields: string[]; delimiter: string; line: string; recipientAt: number } | undefined;

  const item = (row: string[], n: number, h: NonNullable<typeof header>): ContentItem => {
    const values = h.fields.map((_, i) => row[i] ?? '');
    const text = `${h.line}\r\n${values.map((v) => field(v, h.delimiter)).join(h.delimiter)}\r\n`;
    return {
      sourceRef: `${filename}#row=${n}`,
      recipient: values[h.recipientAt] || `row ${n}`,
      outcomeHint: values.join(' '),
      original: { name: `${base}-row-${n}.csv`, contentType: 'text/csv', data: Buffer.from(text) },
    };
  };

  return new Promise<ReadResult>((resolve) => {
    let failed: Error | undefined;
    // Rows as arrays, the first the header: no object per row for a million rows.
    Papa.parse<string[]>(createReadStream(filePath, { encoding: 'utf8' }), {
      skipEmptyLines: 'greedy',
      beforeFirstChunk: (chunk) => chunk.replace(/^\uFEFF/, ''),
      chunk(results, parser) {
        if (failed) return;
        const found = results.errors.find((e) => e.type === 'Delimiter');
        if (found) delimiterError ??= found.message;
        let rows = results.data;
        if (!header && rows.length > 0) {
          const fields = rows[0] ?? [];
          const delimiter = results.meta.delimiter;
          const recipientAt = Math.max(
            0,
            fields.findIndex((f) => /mail|recipient/i.test(f)),
          );
          header = { fields, delimiter, line: Papa.unparse([fields], { delimiter }), recipientAt };
          rows = rows.slice(1);
        }
        const h = header;
        if (!h || rows.length === 0) return;
        parser.pause();
        void (async () => {
          for (const row of rows) {
            const full = sink(item(row, ++count, h));
            if (full) await full;
          }
        })().then(
          () => parser.resume(),
          (err: unknown) => {
            failed = err instanceof Error ? err : new Error(String(err));
            parser.abort();
          },
        );
      },
      complete() {
        if (failed) resolve(fail('UNREADABLE_FILE', `the file could not be read: ${failed.message}`));
        else if (count === 0 && delimiterError)
          resolve(fail('UNREADABLE_FILE', `${filename}: ${delimiterError}`));
        else if (count === 0) resolve(fail('NO_DOCUMENTS', 'the file holds no document to send'));
        else resolve({ ok: true, count });
      },
      error(err) {
        resolve(fail('UNREADABLE_FILE', `the file could not be read: ${err.message}`));
      },
    });
  });
}
