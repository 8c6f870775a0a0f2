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

function outcome(c: CorpusCase): string {
  if (c.expected.outcome === 'left') {
    const said = c.expected.warned === undefined ? '' : ', said once in the log';
    return `left in the drop folder, never read (${cell(c.expected.why)}${said})`;
  }
  return c.expected.outcome === 'archived'
    ? `archived, ${expectedText(c.expected).replace(/^archived \((.*)\)$/, '$1')}`
    : `error folder, \`${c.expected.code}\``;
}

/** A test that pins a class: its file and its title as written in the file (an it.each title with its `$field`). */
export type PinningTest = [file: string, title: string];

/** Issue 16's classes of hostile input and the tests that pin them (render.test.ts checks each exists). */
export const ISSUE_16_CLASSES: Array<[string, PinningTest[]]> = [
  [
    'A parse over its memory cap or time limit, or a worker that dies: that file refused, the agent carries on',
    [
      ['test/core/worker-pool.test.ts', 'answers a task that exhausts the memory cap as the memory limit'],
      [
        'test/core/worker-pool.test.ts',
        'ends a task that runs past the time limit and answers the next one on a new worker',
      ],
      ['test/core/worker-pool.test.ts', 'answers a task whose worker exits as a crash'],
      [
        'test/pipeline/isolate/inspector.test.ts',
        'refuses a CSV whose parse needs more than inspection.memory, then inspects the next file',
      ],
      ['test/pipeline/isolate/inspector.test.ts', 'refuses a file whose check outlasts inspection.timeLimit'],
    ],
  ],
  [
    'Nothing that parses dropped bytes runs on the main event loop',
    [
      [
        'test/pipeline/isolate/main-thread-parses.test.ts',
        'calls the byte parsers only from the worker task table (src/pipeline/isolate/tasks.ts)',
      ],
      [
        'test/pipeline/isolate/main-thread-parses.test.ts',
        'loads pdf-lib, papaparse, fast-xml-parser and yauzl only on the worker side or where allowed, and says why',
      ],
    ],
  ],
  [
    'The 2^64-page tree PDF (finding 1), refused at once; a running agent survives it and a CSV over the memory cap',
    [
      [
        'test/pipeline/isolate/inspector.test.ts',
        'refuses the 6.7 KB PDF whose page tree has 2^64 paths, in its first pass over the tree',
      ],
      [
        'test/pipeline/hostile-inputs.test.ts',
        'refuses a 2^64-page tree PDF and a CSV over the inspection memory, then sends a good PDF',
      ],
    ],
  ],
  [
    'Poison: a file whose inspection two crashes interrupted is set aside at the next start, before anything reads it',
    [
      [
        'test/agent/crash-points.test.ts',
        'is set aside as poison at the start after its second crash, and the agent goes on with the next file',
      ],
      [
        'test/journal/conformance/recovery.test.ts',
        'counts an inspection that never ended across reopenings; an ended one leaves nothing',
      ],
    ],
  ],
  [
    'Prototype pollution (finding 2): `data.__proto__` columns (CSV, index.csv), JSON keys, sidecars, XML elements, mapping lookups',
    [
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses a payload CSV column data.__proto__.<name> and leaves Object.prototype alone',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses data.constructor.prototype.<name> and data.a.prototype columns',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses an index.csv of a payload-pdf batch with a data.__proto__ column',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses a JSON request with a __proto__ key at any depth, instead of silently dropping it',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses a payload-pdf sidecar with a __proto__ key',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'refuses an XML payload file with a __proto__ or constructor element',
      ],
      [
        'test/pipeline/payload/prototype-pollution.test.ts',
        'reads a header named like an Object.prototype member as an unknown column, with a mapping',
      ],
    ],
  ],
  [
    'A linked `.error`, `.archive`, `.processing`, spool or output folder (finding 3), at start or while running: the folder stops (DOCEX_FOLDER_UNSAFE, shown by /readyz), nothing is written through the link',
    [
      [
        'test/pipeline/hostile-inputs.test.ts',
        'stops a folder whose .error is a symbolic link at start, and runs the others',
      ],
      [
        'test/pipeline/hostile-inputs.test.ts',
        'stops a folder whose $dir is swapped for a symbolic link while running, reports it in /readyz, writes nothing through the link, and finishes the file once restarted on a real folder',
      ],
      [
        'test/sources/local/local-source-rules.test.ts',
        'leaves its own .processing and archive folder, swapped for links, where they are and reports the folder unsafe instead of refusing them as dropped links',
      ],
      [
        'test/sources/sftp/source-spool.test.ts',
        'downloads nothing into a spool .processing swapped for a symbolic link while running, and reports the folder unsafe',
      ],
      ['test/core/real-dir.test.ts', 'writes no output through a linked sub-folder of an output folder'],
      [
        'test/agent/reload-retry.test.ts',
        'starts again on a reload a folder stopped for an .archive swapped for a link, once a real folder is back, and archives its uploaded file',
      ],
    ],
  ],
  [
    'Expansion (finding 4): PDF object streams, ZIP bombs cut small, XML elements and attributes, CSV columns and lines',
    [
      [
        'test/pipeline/isolate/amplification.test.ts',
        'refuses a PDF whose object stream inflates over inspection.limits.pdfInflate',
      ],
      [
        'test/pipeline/isolate/amplification.test.ts',
        'refuses a ZIP bomb cut into entries too small for the per-entry ratio check',
      ],
      [
        'test/pipeline/isolate/amplification.test.ts',
        'refuses XML with more elements or attributes than inspection.limits allows',
      ],
      [
        'test/pipeline/isolate/amplification.test.ts',
        'refuses a CSV with more columns, or a longer line, than inspection.limits allows',
      ],
    ],
  ],
  [
    'A sidecar over its size limit (finding 4)',
    [
      [
        'test/pipeline/hostile-inputs.test.ts',
        'refuses a payload-pdf sidecar over inspection.limits.sidecarBytes without reading it whole',
      ],
    ],
  ],
  [
    'Quadratic work (finding 5): a header of 120,000 `data.*` columns',
    [
      [
        'test/pipeline/isolate/amplification.test.ts',
        'plans a header of 120,000 data columns in one pass, still finding a value that is also an object',
      ],
    ],
  ],
  [
    'UBL namespace from the root element, exact JSON numbers, hard links (finding 6)',
    [
      [
        'test/pipeline/inspect/checks-mean-it.test.ts',
        'refuses a document whose root is not in the UBL namespace, though the URN appears elsewhere',
      ],
      [
        'test/pipeline/inspect/checks-mean-it.test.ts',
        'refuses %s, which a double cannot hold, instead of sending another number',
      ],
      [
        'test/pipeline/inspect/checks-mean-it.test.ts',
        'refuses a file with a second hard link, unless the folder allows them',
      ],
    ],
  ],
  [
    'Names with bidi overrides, U+2028/2029, zero-width or C1 characters (finding 6)',
    [
      [
        'test/pipeline/inspect/inspect-file.test.ts',
        'a name with a right-to-left override (shows as "invoicefdp.exe" reversed)',
      ],
    ],
  ],
  [
    'A file over 1 MiB rewritten with the same size and mtime between its hash and its upload (finding 6): never sent whole, refused with DOCEX_SOURCE_CHANGED',
    [
      [
        'test/api/upload.test.ts',
        'never sends whole a file rewritten after its hash with the same size and mtime (DOCEX_SOURCE_CHANGED, not retried)',
      ],
      [
        'test/pipeline/hostile-inputs.test.ts',
        'refuses a file over 1 MiB rewritten with the same size and mtime between its hash and its upload, never sending it whole',
      ],
    ],
  ],
  [
    'Spreadsheet formulas in the CSV outputs (finding 7)',
    [
      ['test/core/csv.test.ts', 'prefixes a text cell that a spreadsheet would run as a formula: %j'],
      [
        'test/returns/proof-names.test.ts',
        'writes the daily statuses CSV formula-safe: a file name or recipient that starts a formula is prefixed with a quote',
      ],
    ],
  ],
  [
    'Every log line JSON, a fatal one and third-party stderr too; a 255-byte name dropped twice (finding 8)',
    [
      [
        'test/cli/fatal-logging.test.ts',
        'writes an uncaught error as one JSON fatal line, then exits with 70',
      ],
      [
        'test/cli/fatal-logging.test.ts',
        'turns third-party text on standard error into JSON warn lines, and gives stderr back',
      ],
      [
        'test/sources/local/claim.test.ts',
        'claims a 255-byte name dropped twice under a shortened numbered name, not ENAMETOOLONG',
      ],
    ],
  ],
  [
    'Mutated PDFs, ZIPs, CSVs and XMLs (fast-check, seeded): accepted or refused, never a crash',
    [
      [
        'test/pipeline/isolate/fuzz-inspect.test.ts',
        'answers every mutated %s with an acceptance or a known refusal',
      ],
    ],
  ],
  [
    'Hostile row values (issue 29): control characters (C0, DEL, C1, lone surrogates), line breaks in one-line fields, bidi and zero-width characters in identifiers, repeated JSON keys: the row refused with row, field and code point named, the other rows sent',
    [
      [
        'test/domain/payload-text.test.ts',
        'refuses %s in template data, naming the field and the code point but not the value',
      ],
      ['test/domain/payload-text.test.ts', 'refuses a line break in a one-line %s value'],
      [
        'test/domain/payload-text.test.ts',
        'refuses an invisible character in the identifier %s (%s), naming its code point',
      ],
      [
        'test/pipeline/payload/row-characters.test.ts',
        'sends the other rows under onInvalidRow: skip and journals each bad row with its own code',
      ],
      [
        'test/pipeline/inspect/json-duplicate-keys.test.ts',
        'decodes escaped keys before comparing them, as JSON.parse does',
      ],
      [
        'test/pipeline/payload/row-characters.test.ts',
        'never takes one of two values silently from XML: a repeated attribute refuses the file, a repeated element its record',
      ],
    ],
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
    'exactly its job(s) in the service and the uploaded bytes match. A payload file in the `rows` folder',
    '(onInvalidRow: skip) may be archived with some rows refused: each is named in `<file>.result.json`',
    'with its code and in the row report, by field and code point, never by its value. A file in a',
    'sub-folder the recursive `tree` folder does not enter (its name is not a valid file name, or it is',
    'hidden) is left where it was dropped: no job of its bytes, no record, and a warning logged once when',
    'the name is the reason, whatever the rescans. Afterwards the agent must still',
    `take a good file, and its peak RSS (VmHWM) must stay under ${MAX_PEAK_RSS_MIB} MiB although the corpus holds a`,
    `${mib(BOMB_BYTES)} zip bomb and a billion-laughs XML: nothing hostile is ever expanded.`,
    '',
    `The corpus agent runs with \`maxFileBytes: ${mib(CORPUS_MAX_FILE_BYTES)}\` and the rename-in stability rule.`,
    '`DOCEX_CORPUS_ONLY=<regex>` drops only the matching cases; `DOCEX_CORPUS_VERBOSE=1` prints each',
    "outcome with its reason, the agent's peak RSS and the test process's (the sandbox runs in it).",
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
    '| Class | Tests (file › name) |',
    '|---|---|',
    ...ISSUE_16_CLASSES.map(
      ([what, tests]) =>
        `| ${cell(what)} | ${tests.map(([file, title]) => `\`${file}\` › ${cell(title)}`).join('<br>')} |`,
    ),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(BAD_INPUTS_DOC, renderBadInputs());
  process.stdout.write(`wrote ${BAD_INPUTS_DOC}\n`);
}
