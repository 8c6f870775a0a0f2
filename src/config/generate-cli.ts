/**
 * Regenerates config/agent.schema.json and config/agent.example.yaml from the schema.
 * `npx tsx src/config/generate-cli.ts` writes them; `--check` only reports drift (exit code 1).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleGeneratedFiles, writeGeneratedFiles } from './generate.js';

const configDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config');

if (process.argv.includes('--check')) {
  const stale = staleGeneratedFiles(configDir);
  for (const file of stale) process.stderr.write(`out of date: ${path.relative(process.cwd(), file)}\n`);
  if (stale.length > 0) process.stderr.write('run: npx tsx src/config/generate-cli.ts\n');
  process.exitCode = stale.length > 0 ? 1 : 0;
} else {
  for (const file of writeGeneratedFiles(configDir)) {
    process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
}
