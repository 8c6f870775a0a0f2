/**
 * docs/bad-inputs.md from the corpus table, so the doc cannot say what the test does not check.
 * `npx tsx test/corpus/render.ts` rewrites the file; render.test.ts fails when it drifts.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  BOMB_BYTES,
  CORPUS,
  CORPUS_FOLDERS,
  CORPUS_MAX_FILE_BYTES,
  type CorpusCase,
  type CorpusFolderName,
  expectedText,
  MAX_PEAK_RSS_MIB,
} from './corpus.js';

export const BAD_INPUTS_DOC = fileURLToPath(new URL('../../docs/bad-inputs.md', import.meta.url));

/** A table cell: pipes and angle brackets escaped, control characters shown as escapes (a newline in a name). */
function cell(text: string): string {
  return text
    .replace(/[\u0000-\u001f]/g, (c) => JSON.stringify(c).slice(1, -1))
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;');
}

/** Long names are shortened in the table: the shape matters, not the 250 letters. */
function shownName(c: CorpusCase): string {
  const name = c.file;
  if (c.nameBytes) {
    const shown = [...c.nameBytes].map((b) => (b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16)}`));
    return `${shown.join('')} (bytes)`;
  }
  const bytes = Buffer.byteLength(name);
  return name.length > 40 ? `${name.slice(0, 12)}…${name.slice(-8)} (${bytes} bytes)` : name;
}

const outcome = (c: CorpusCase) =>
  c.expected.outcome === 'archived'
    ? `archived, ${expectedText(c.expected).replace(/^archived \((.*)\)$/, '$1')}`
    : `error folder, \`${c.expected.code}\``;

/** Issue 16's classes of hostile input and the test files that pin them. */
const ISSUE_16_CLASSES: Array<[string, string]> = [
  [
    'A parse over its memory cap or time limit, or a worker that dies (the agent carries on)',
    'test/pipeline/isolate/pool.test.ts, test/pipeline/isolate/inspector.test.ts',
  ],
  [
    'The 2^64-page tree PDF, refused at once; a running agent survives it and a CSV over the memory cap',
    'test/pipeline/hostile-inputs.test.ts',
  ],
  [
    'Prototype pollution: `data.__proto__` columns (CSV, index.csv), JSON keys, XML elements, mapping lookups',
    'test/pipeline/payload/prototype-pollution.test.ts',
  ],
  [
    'A linked `.error`, `.archive`, `.processing`, spool or output folder',
    'test/pipeline/hostile-inputs.test.ts, test/core/real-dir.test.ts',
  ],
  [
    'Expansion: PDF object streams, ZIP bombs cut small, XML elements and attributes, CSV columns and lines, 120,000-column headers',
    'test/pipeline/isolate/amplification.test.ts',
  ],
  ['A sidecar over its size limit', 'test/pipeline/hostile-inputs.test.ts'],
  [
    'UBL namespace from the root element, exact JSON numbers, hard links',
    'test/pipeline/inspect/checks-mean-it.test.ts',
  ],
  [
    'Names with bidi overrides, U+2028/2029, zero-width or C1 characters',
    'test/pipeline/inspect/inspect-file.test.ts',
  ],
  ['Spreadsheet formulas in the CSV outputs', 'test/core/csv.test.ts'],
  [
    'Mutated PDFs, ZIPs, CSVs and XMLs (fast-check, seeded): accepted or refused, never a crash',
    'test/pipeline/isolate/fuzz-inspect.test.ts',
  ],
];

export function renderBadInputs(): string {
  const mib = (n: number) => `${n / 1024 / 1024} MiB`;
  const lines = [
    '# Bad inputs: what the agent does with hostile and odd files',
    '',
    '<!-- Generated from test/corpus/corpus.ts by `npx tsx test/corpus/render.ts`; do not edit by hand. -->',
    '',
    'Every case below is a generated file dropped, all at once, on one running agent (a child process',
    'started like `docex-agent start`) talking to the sandbox over HTTPS + mTLS: `npx vitest run',
    'test/corpus/corpus.test.ts`, also part of `npm test` and CI. For each case the test checks the',
    "outcome in the table: either the file sits in the folder's error folder with `<file>.error.json`",
    '(the code) and a plain-text `<file>.error.txt`, and no job was created; or it is archived with',
    'exactly its job(s) in the service and the uploaded bytes match. Afterwards the agent must still',
    `take a good file, and its peak RSS (VmHWM) must stay under ${MAX_PEAK_RSS_MIB} MiB although the corpus holds a`,
    `${mib(BOMB_BYTES)} zip bomb and a billion-laughs XML: nothing hostile is ever expanded.`,
    '',
    `The corpus agent runs with \`maxFileBytes: ${mib(CORPUS_MAX_FILE_BYTES)}\` and the rename-in stability rule.`,
    '`DOCEX_CORPUS_ONLY=<regex>` drops only the matching cases; `DOCEX_CORPUS_VERBOSE=1` prints each',
    "outcome with its reason and the agent's peak RSS.",
    '',
    '## Folders',
    '',
    '| Folder | Workflow | Takes |',
    '|---|---|---|',
    ...(
      Object.entries(CORPUS_FOLDERS) as Array<[CorpusFolderName, (typeof CORPUS_FOLDERS)[CorpusFolderName]]>
    ).map(([name, f]) => `| \`${name}\` | \`${f.workflowId}\` | ${cell(f.takes)} |`),
    '',
    '## Cases',
    '',
    '| Input | Folder | Dropped as | Outcome |',
    '|---|---|---|---|',
    ...CORPUS.map((c) => `| ${cell(c.name)} | \`${c.folder}\` | \`${cell(shownName(c))}\` | ${outcome(c)} |`),
    '',
    '## Isolation and limits: where each class is pinned',
    '',
    'Every parse of a dropped file (PDF, ZIP, XML, CSV, JSON) runs in a worker thread under',
    '`inspection.memory` and `inspection.timeLimit`; a file over a limit is refused with',
    '`DOCEX_INPUT_TOO_COMPLEX` naming it, and the agent carries on. Besides the corpus above:',
    '',
    '| Class | Test |',
    '|---|---|',
    ...ISSUE_16_CLASSES.map(([what, test]) => `| ${cell(what)} | \`${test}\` |`),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(BAD_INPUTS_DOC, renderBadInputs());
  process.stdout.write(`wrote ${BAD_INPUTS_DOC}\n`);
}
