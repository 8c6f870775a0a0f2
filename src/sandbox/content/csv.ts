import path from 'node:path';
import Papa from 'papaparse';
import { type ContentResult, collect, fail } from './types.js';

/** A CSV data file: one item per row, its original the header plus that row. */
export function csvItems(data: Buffer, filename: string): ContentResult {
  const parsed = Papa.parse<Record<string, string>>(data.toString('utf8').replace(/^\uFEFF/, ''), {
    header: true,
    skipEmptyLines: 'greedy',
  });
  const fatal = parsed.errors.find((e) => e.type === 'Delimiter' && parsed.data.length === 0);
  if (fatal) return fail('UNREADABLE_FILE', `${filename}: ${fatal.message}`);
  const fields = parsed.meta.fields ?? [];
  const recipientField = fields.find((f) => /mail|recipient/i.test(f)) ?? fields[0];
  const delimiter = parsed.meta.delimiter;
  const header = Papa.unparse([fields], { delimiter });
  return collect(
    parsed.data.map((row, i) => {
      const values = fields.map((f) => row[f] ?? '');
      const text = `${header}\r\n${Papa.unparse([values], { delimiter })}\r\n`;
      return {
        sourceRef: `${filename}#row=${i + 1}`,
        recipient: (recipientField ? row[recipientField] : undefined) || `row ${i + 1}`,
        outcomeHint: values.join(' '),
        original: {
          name: `${path.basename(filename, '.csv')}-row-${i + 1}.csv`,
          contentType: 'text/csv',
          data: Buffer.from(text),
        },
      };
    }),
  );
}
