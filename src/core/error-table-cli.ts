/**
 * Regenerates the error table of docs/errors.md from core/error-codes.ts.
 * `npx tsx src/core/error-table-cli.ts` writes it; `--check` only reports drift (exit code 1).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorTableIsCurrent, writeErrorTable } from './error-table.js';

const page = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/errors.md');
const shown = path.relative(process.cwd(), page);

if (process.argv.includes('--check')) {
  const current = errorTableIsCurrent(page);
  if (!current) process.stderr.write(`out of date: ${shown}\nrun: npm run errors:generate\n`);
  process.exitCode = current ? 0 : 1;
} else {
  writeErrorTable(page);
  process.stdout.write(`wrote ${shown}\n`);
}
