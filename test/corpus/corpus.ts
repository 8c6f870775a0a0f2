/**
 * The bad-input corpus (issue 7): one table of hostile and odd inputs, each with the folder it is
 * dropped into and the outcome the agent owes it: `archived` with its job(s) in the service, or
 * `error` with an exact code. Every file is generated here (hostile.ts builders), nothing opaque is
 * checked in. corpus.test.ts drops the whole table on one running agent; render.ts turns it into
 * docs/bad-inputs.md.
 */
import { execFileSync } from 'node:child_process';
import { linkSync, readFileSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SEED } from '../../src/sandbox/seed-ids.js';
import {
  BILLION_LAUGHS,
  csvBytes,
  deflatedZeros,
  ENCRYPT_DICTIONARY,
  EXTERNAL_ENTITY,
  encryptedPdf,
  endlessXrefPdf,
  garbagePdf,
  HTML_ERROR_PAGE,
  handXrefStreamPdf,
  largePdf,
  latin1Csv,
  MALFORMED_XML,
  makeZip,
  noPagePdf,
  ONE_PAGE_OBJECTS,
  objectStreamBombPdf,
  pageTreeBombPdf,
  randomishBytes,
  truncatedPdf,
  utf16Csv,
  validPdf,
  wideText,
} from '../fixtures/inputs/hostile.js';

export type CorpusFolderName = 'pdf' | 'data' | 'ubl' | 'words' | 'rows' | 'letters' | 'tree';

export interface CorpusFolder {
  workflowId: string;
  mode?: 'single-file' | 'payload-pdf' | 'payload-word';
  /** `skip`: a bad row is refused and reported, the other rows are sent. */
  onInvalidRow?: 'skip';
  /** Files of its sub-folders are taken too (`recursive: true`, 4 levels). */
  recursive?: true;
  /** For the doc: what the folder takes. */
  takes: string;
}

export const CORPUS_FOLDERS: Record<CorpusFolderName, CorpusFolder> = {
  pdf: { workflowId: SEED.workflows.pdfEmail, takes: 'PDF workflow (single-file): .pdf, .zip of PDFs' },
  data: { workflowId: SEED.workflows.dataFile, takes: 'DATA_FILE workflow: .csv, .xml' },
  ubl: { workflowId: SEED.workflows.ubl, takes: 'UBL workflow: .xml, .zip of UBL' },
  words: {
    workflowId: SEED.workflows.payloadWordEmail,
    mode: 'payload-word',
    takes: 'payload-word: .csv (one job per row), .json, .xml',
  },
  rows: {
    workflowId: SEED.workflows.payloadWordEmail,
    mode: 'payload-word',
    onInvalidRow: 'skip',
    takes: 'payload-word with onInvalidRow: skip: a bad row is refused and reported, the other rows sent',
  },
  letters: {
    workflowId: SEED.workflows.payloadPdfPrint,
    mode: 'payload-pdf',
    takes: 'payload-pdf, sidecar pairing: letter.pdf + letter.json',
  },
  tree: {
    workflowId: SEED.workflows.pdfEmail,
    recursive: true,
    takes: 'PDF workflow, recursive: the files of its sub-folders too (a case names its sub-path)',
  },
};

/** The size limit the corpus agent runs with (config `maxFileBytes`). */
export const CORPUS_MAX_FILE_BYTES = 24 * 1024 * 1024;
/** Over the 16 MiB up to which a PDF is parsed whole (pdf.ts PDF_PARSE_MAX_BYTES): checked by its structure. */
const LARGE_PDF_BYTES = 17 * 1000 * 1000;
/** The zip bomb's expanded size: far above what the agent may ever hold (see the memory bound). */
export const BOMB_BYTES = 256 * 1024 * 1024;
/**
 * Peak RSS (VmHWM) allowed to the agent process over the whole corpus. Measured: idle 173 MiB on
 * Node 20 and 180 MiB on Node 24 (Node, tsx transpiling the sources, SQLite) before the isolated
 * inspection; with it (issue 16) 213.5 MiB idle on Node 20 (one inspection worker started) and
 * 465.8 MiB through the corpus. Issue 29's endless-xref.pdf, parsed by pdf-lib until its worker
 * reached its heap cap (inspection.memory: 256 MiB), raised the peak to 555-635 MiB; refused as
 * corrupt before pdf-lib builds its entries (issue 30), the corpus peaks at 350-360 MiB on Node 22
 * and 24 and no worker reaches its cap. The bound keeps room for two workers parsing hostile
 * files at once, stays under issue 16's 600 MB, and is below what expanding the zip bomb (256 MiB
 * more) or the billion-laughs file (about 3 GB) would reach: it shows nothing hostile was inflated.
 */
export const MAX_PEAK_RSS_MIB = 500;

/** A row of a payload file refused on its own (onInvalidRow: skip): its journal label and code. */
export interface RefusedRow {
  label: string;
  code: string;
}

export type Expected =
  | { outcome: 'archived'; jobs: number; refused?: RefusedRow[] }
  | { outcome: 'error'; code: string }
  /**
   * Left where it was dropped, never read (a sub-folder the agent does not enter): `why`, for the
   * doc; `warned`: the sub-folder as the one warning about it names it, when one is owed.
   */
  | { outcome: 'left'; why: string; warned?: string };

export interface DropContext {
  /** Absolute path of a corpus folder's drop folder. */
  folderPath(folder: CorpusFolderName): string;
  /** A folder outside every drop folder (targets of escaping links). */
  outside: string;
}

export interface CorpusCase {
  /** Unique; the test name. */
  name: string;
  folder: CorpusFolderName;
  /**
   * The file as dropped: the name looked for in the archive or error folder; in the recursive
   * `tree` folder its path below the drop folder (`sub/x.pdf`), kept by its archive and error places.
   */
  file: string;
  /**
   * The name's raw bytes when they are not UTF-8 (a Latin-1 name from an old ERP or a share mounted
   * with the wrong charset); `file` is then how Node shows it (U+FFFD for each bad byte). In `tree`,
   * the bytes of its whole path below the drop folder.
   */
  nameBytes?: Buffer;
  /** How the file gets into the drop folder (complete, as rename-in expects). */
  write(target: string, ctx: DropContext): Promise<void>;
  expected: Expected;
}

/** Writes under an ignored temporary name, then renames in: the file appears complete. */
export async function put(target: string, content: Buffer | string): Promise<void> {
  const temp = path.join(path.dirname(target), `.corpus-${process.hrtime.bigint()}.tmp`);
  await fs.writeFile(temp, content);
  await fs.rename(temp, target);
}

const pdfOf = (text: string) => validPdf(1, `corpus: ${text}`);
const writes =
  (content: () => Buffer | string | Promise<Buffer | string>) =>
  async (target: string): Promise<void> =>
    put(target, await content());

/**
 * Makes the sub-folder `sub` of a drop folder (bytes: a name that is not UTF-8) holding `file`, as an
 * ERP moving a finished folder in would: made under an ignored hidden name, then renamed into place.
 */
async function putFolder(
  dropFolder: string,
  sub: string | Buffer,
  file: string,
  content: Buffer | string,
): Promise<void> {
  const temp = path.join(dropFolder, `.corpus-dir-${process.hrtime.bigint()}.tmp`);
  await fs.mkdir(temp);
  await fs.writeFile(path.join(temp, file), content);
  const target =
    typeof sub === 'string'
      ? path.join(dropFolder, sub)
      : Buffer.concat([Buffer.from(`${dropFolder}/`), sub]);
  await fs.rename(temp, target);
}

const archived = (jobs = 1, refused?: RefusedRow[]): Expected =>
  refused ? { outcome: 'archived', jobs, refused } : { outcome: 'archived', jobs };
const error = (code: string): Expected => ({ outcome: 'error', code });
const left = (why: string, warned?: string): Expected =>
  warned === undefined ? { outcome: 'left', why } : { outcome: 'left', why, warned };
/** What the agent says of a sub-folder it does not enter (local-source.ts). */
export const NOT_ENTERED = 'sub-folder name is not a valid file name: not entered';
/** A sub-folder name of 255 bytes, NAME_MAX: the longest a folder can have. */
const LONG_FOLDER = 'd'.repeat(255);

const UBL_SAMPLE = () => readFileSync(new URL('../../samples/ubl/invoice-base-example.xml', import.meta.url));
const LETTER_SIDECAR = () =>
  JSON.parse(
    readFileSync(
      new URL('../../samples/payload-pdf-print/letter-with-payment.json', import.meta.url),
      'utf8',
    ),
  ) as Record<string, unknown>;

/** A name of `bytes` UTF-8 bytes ending in `.pdf`: at 250 bytes, "{name}.result.json" is over NAME_MAX. */
export function longName(bytes: number): string {
  return `${'l'.repeat(bytes - 4)}.pdf`;
}

/** `[[[…1…]]]`, `depth` levels: parsers that recurse (JSON.stringify, tree walkers) run out of stack. */
export function deepArray(depth: number): string {
  return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

const DEEP = 100_000;

/** Both bombs share one compressed body (about 1.2 s to deflate 256 MiB). */
let bomb: ReturnType<typeof deflatedZeros> | undefined;
const bombBody = () => {
  bomb ??= deflatedZeros(BOMB_BYTES);
  return bomb;
};

/**
 * A cell that pushes what follows past the first 4 KiB, the bytes the type check reads (a NUL
 * there makes the whole file "binary"): ERP exports are larger than that, so a bad cell in row 300
 * gets past the type check and must be caught by the row check.
 */
const PAST_HEAD = 'n'.repeat(4200);

/** A payload-word request for the email workflow, as a JSON payload file's item. */
function wordItem(email: string, more: Array<[string, string]> = []): Record<string, unknown> {
  return {
    payload: {
      channelIdentifiers: [
        { kind: 'EMAIL_ADDRESS', value: email },
        ...more.map(([kind, value]) => ({ kind, value })),
      ],
      extraInfoIdentifiers: [],
      templateData: {},
    },
  };
}

const CUSTOMERS = [
  ['customerId', 'name', 'email', 'amount'],
  ['C001', 'Zoë Dubois', 'zoe@example.com', '125,00'],
];

export const CORPUS: CorpusCase[] = [
  // --- names: good files under odd names must go through --------------------------------------
  {
    name: 'a PDF whose name has spaces',
    folder: 'pdf',
    file: 'invoice 2026 0001 final.pdf',
    write: writes(() => pdfOf('spaces')),
    expected: archived(),
  },
  {
    name: 'a PDF with a unicode name in NFC',
    folder: 'pdf',
    file: 'facture-\u00e9t\u00e9-\u00e7a.pdf'.normalize('NFC'),
    write: writes(() => pdfOf('nfc')),
    expected: archived(),
  },
  {
    name: 'a PDF with a unicode name in NFD (macOS-style decomposed accents)',
    folder: 'pdf',
    file: 're\u00e7u-\u00e9t\u00e9.pdf'.normalize('NFD'),
    write: writes(() => pdfOf('nfd')),
    expected: archived(),
  },
  {
    name: 'a PDF with a CJK and emoji name',
    folder: 'pdf',
    file: '\u8acb\u6c42\u66f8-2026-\u{1f9fe}.pdf',
    write: writes(() => pdfOf('cjk')),
    expected: archived(),
  },
  {
    name: 'a PDF whose name starts with a dash',
    folder: 'pdf',
    file: '-rf invoice.pdf',
    write: writes(() => pdfOf('dash')),
    expected: archived(),
  },
  {
    name: 'a PDF with an upper-case extension',
    folder: 'pdf',
    file: 'SCAN-0001.PDF',
    write: writes(() => pdfOf('upper')),
    expected: archived(),
  },
  {
    name: 'a PDF whose 250-byte name leaves no room for its .result.json side file',
    folder: 'pdf',
    file: longName(250),
    write: writes(() => pdfOf('long name')),
    expected: archived(),
  },
  {
    name: 'a PDF whose name has quotes, a colon, a backslash and a semicolon',
    folder: 'pdf',
    file: `we"ird 'quo:ted' back\\slash; name.pdf`,
    write: writes(() => pdfOf('punctuation')),
    expected: archived(),
  },
  {
    name: 'a PDF whose name is Latin-1, not UTF-8',
    folder: 'pdf',
    file: 'facture-\ufffd.pdf',
    nameBytes: Buffer.from('facture-\u00e9.pdf', 'latin1'),
    write: async (_target, ctx) => {
      const dir = Buffer.from(`${ctx.folderPath('pdf')}/`);
      const temp = Buffer.concat([dir, Buffer.from('.latin1-name.tmp')]);
      await fs.writeFile(temp, await pdfOf('latin1 name'));
      await fs.rename(temp, Buffer.concat([dir, Buffer.from('facture-\u00e9.pdf', 'latin1')]));
    },
    expected: error('DOCEX_INPUT_BAD_NAME'),
  },
  {
    name: 'a PDF with a newline in its name',
    folder: 'pdf',
    file: 'two\nlines.pdf',
    write: writes(() => pdfOf('newline')),
    expected: error('DOCEX_INPUT_BAD_NAME'),
  },
  // --- what is at the path ----------------------------------------------------------------------
  {
    name: 'the target of a link in the same folder',
    folder: 'pdf',
    file: 'link-target.pdf',
    write: writes(() => pdfOf('link target')),
    expected: archived(),
  },
  {
    name: 'a symbolic link to a file in the same folder',
    folder: 'pdf',
    file: 'link-inside.pdf',
    write: async (target) => fs.symlink('link-target.pdf', target),
    expected: error('DOCEX_INPUT_SYMLINK'),
  },
  {
    name: 'a symbolic link to a file outside the folder',
    folder: 'pdf',
    file: 'link-outside.pdf',
    write: async (target, ctx) => {
      const secret = path.join(ctx.outside, 'secret.pdf');
      await fs.writeFile(secret, await pdfOf('outside secret'));
      await fs.symlink(secret, target);
    },
    expected: error('DOCEX_INPUT_SYMLINK'),
  },
  {
    name: 'a FIFO (named pipe) with a .pdf name',
    folder: 'pdf',
    file: 'pipe.pdf',
    write: async (target) => {
      execFileSync('mkfifo', [target]);
    },
    expected: error('DOCEX_INPUT_NOT_A_FILE'),
  },
  {
    name: 'a zero-byte PDF',
    folder: 'pdf',
    file: 'empty.pdf',
    write: writes(() => Buffer.alloc(0)),
    expected: error('DOCEX_INPUT_EMPTY'),
  },
  {
    name: 'a file over maxFileBytes',
    folder: 'pdf',
    file: 'huge.pdf',
    write: async (target) => {
      const pdf = await pdfOf('huge');
      // A valid PDF padded with a comment to just over the limit: only the size is wrong.
      const pad = Buffer.alloc(CORPUS_MAX_FILE_BYTES + 1 - pdf.length, 0x20);
      await put(target, Buffer.concat([pdf.subarray(0, 9), Buffer.from('%'), pad, pdf.subarray(9)]));
    },
    expected: error('DOCEX_INPUT_TOO_LARGE'),
  },
  // --- PDF content ------------------------------------------------------------------------------
  {
    name: 'a 17 MB PDF, over the 16 MiB up to which a PDF is parsed whole: its ends, cross-reference, trailer, catalog and page tree root are checked',
    folder: 'pdf',
    file: 'large.pdf',
    write: writes(() => largePdf(LARGE_PDF_BYTES)),
    expected: archived(),
  },
  {
    name: 'a 17 MB file of %PDF-, zeros and %%EOF (no cross-reference)',
    folder: 'pdf',
    file: 'large-noise.pdf',
    write: writes(() => {
      const out = Buffer.alloc(LARGE_PDF_BYTES);
      out.write('%PDF-1.7\n', 0, 'latin1');
      out.write('\n%%EOF\n', LARGE_PDF_BYTES - 7, 'latin1');
      return out;
    }),
    expected: error('DOCEX_INPUT_PDF_CORRUPT'),
  },
  {
    name: 'a 17 MB encrypted PDF whose trailer writes /Encrypt with a #-escape (/Encr#79pt)',
    folder: 'pdf',
    file: 'large-escaped-encrypt.pdf',
    write: writes(() => largePdf(LARGE_PDF_BYTES, '/Encr#79pt 1 0 R ')),
    expected: error('DOCEX_INPUT_PDF_ENCRYPTED'),
  },
  {
    name: 'a 17 MB encrypted PDF whose /Encrypt is in its cross-reference stream dictionary, #-escaped',
    folder: 'pdf',
    file: 'large-xref-stream-encrypt.pdf',
    write: writes(() => {
      const pad = LARGE_PDF_BYTES - 2000;
      return handXrefStreamPdf(
        [
          ...ONE_PAGE_OBJECTS,
          ENCRYPT_DICTIONARY,
          `<< /Length ${pad} >>\nstream\n${' '.repeat(pad)}\nendstream`,
        ],
        '/#45ncrypt 4 0 R',
      );
    }),
    expected: error('DOCEX_INPUT_PDF_ENCRYPTED'),
  },
  {
    name: 'a corrupt PDF (header and %%EOF around garbage)',
    folder: 'pdf',
    file: 'corrupt.pdf',
    write: writes(garbagePdf),
    expected: error('DOCEX_INPUT_PDF_CORRUPT'),
  },
  {
    name: 'a truncated PDF (cut at 60%)',
    folder: 'pdf',
    file: 'truncated.pdf',
    write: writes(async () => truncatedPdf(await validPdf(3, 'corpus: truncated'))),
    expected: error('DOCEX_INPUT_PDF_TRUNCATED'),
  },
  {
    name: 'a password-protected PDF',
    folder: 'pdf',
    file: 'encrypted.pdf',
    write: writes(encryptedPdf),
    expected: error('DOCEX_INPUT_PDF_ENCRYPTED'),
  },
  {
    name: 'a PDF with no pages',
    folder: 'pdf',
    file: 'no-pages.pdf',
    write: writes(noPagePdf),
    expected: error('DOCEX_INPUT_PDF_EMPTY'),
  },
  {
    name: 'a ZIP named .pdf',
    folder: 'pdf',
    file: 'really-a-zip.pdf',
    write: writes(async () => makeZip([{ name: 'a.pdf', data: await pdfOf('zip as pdf') }])),
    expected: error('DOCEX_INPUT_TYPE_MISMATCH'),
  },
  {
    name: 'binary garbage named .pdf',
    folder: 'pdf',
    file: 'noise.pdf',
    write: writes(() => randomishBytes(4096)),
    expected: error('DOCEX_INPUT_UNKNOWN_TYPE'),
  },
  {
    name: 'a Word document in a PDF folder',
    folder: 'pdf',
    file: 'letter.docx',
    write: writes(() => makeZip([{ name: 'word/document.xml', data: '<w:document/>' }])),
    expected: error('DOCEX_INPUT_WRONG_FOR_WORKFLOW'),
  },
  // --- ZIP archives (a PDF workflow takes a ZIP of PDFs as one job) ------------------------------
  {
    name: 'a ZIP of two PDFs',
    folder: 'pdf',
    file: 'two-invoices.zip',
    write: writes(async () =>
      makeZip([
        { name: 'one.pdf', data: await pdfOf('zip one') },
        { name: 'sub/two.pdf', data: await pdfOf('zip two') },
      ]),
    ),
    expected: archived(),
  },
  {
    name: 'a zip bomb (one entry expanding 256 MiB, about 1000 to 1)',
    folder: 'pdf',
    file: 'bomb.zip',
    write: writes(async () => makeZip([{ name: 'bomb.pdf', deflated: await bombBody() }])),
    expected: error('DOCEX_INPUT_ZIP_BOMB'),
  },
  {
    name: 'a zip bomb whose header lies (declares 1 KiB, expands 256 MiB)',
    folder: 'pdf',
    file: 'lying-bomb.zip',
    write: writes(async () =>
      makeZip([{ name: 'small.pdf', deflated: await bombBody(), declaredSize: 1024 }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_CORRUPT'),
  },
  {
    name: 'a ZIP with a "../" zip-slip entry',
    folder: 'pdf',
    file: 'slip-dotdot.zip',
    write: writes(async () => makeZip([{ name: '../../etc/evil.pdf', data: await pdfOf('slip 1') }])),
    expected: error('DOCEX_INPUT_ZIP_UNSAFE_PATH'),
  },
  {
    name: 'a ZIP with an absolute entry path',
    folder: 'pdf',
    file: 'slip-absolute.zip',
    write: writes(async () => makeZip([{ name: '/tmp/evil.pdf', data: await pdfOf('slip 2') }])),
    expected: error('DOCEX_INPUT_ZIP_UNSAFE_PATH'),
  },
  {
    name: 'a ZIP with a backslash zip-slip entry',
    folder: 'pdf',
    file: 'slip-backslash.zip',
    write: writes(async () => makeZip([{ name: '..\\..\\evil.pdf', data: await pdfOf('slip 3') }])),
    expected: error('DOCEX_INPUT_ZIP_UNSAFE_PATH'),
  },
  {
    name: 'a ZIP nested in a ZIP',
    folder: 'pdf',
    file: 'nested.zip',
    write: writes(async () =>
      makeZip([{ name: 'inner.zip', data: makeZip([{ name: 'a.pdf', data: await pdfOf('nested') }]) }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_NESTED'),
  },
  {
    name: 'a ZIP nested in a ZIP under a .pdf entry name',
    folder: 'pdf',
    file: 'nested-disguised.zip',
    write: writes(async () =>
      makeZip([{ name: 'looks.pdf', data: makeZip([{ name: 'a.pdf', data: await pdfOf('disguised') }]) }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_NESTED'),
  },
  {
    name: 'a ZIP with a symbolic link entry',
    folder: 'pdf',
    file: 'symlink-entry.zip',
    write: writes(() => makeZip([{ name: 'passwd.pdf', data: '/etc/passwd', unixMode: 0o120777 }])),
    expected: error('DOCEX_INPUT_ZIP_SYMLINK'),
  },
  {
    name: 'a ZIP with an encrypted entry',
    folder: 'pdf',
    file: 'encrypted-entry.zip',
    write: writes(async () =>
      makeZip([{ name: 'a.pdf', data: await pdfOf('enc entry'), encryptedFlag: true }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_ENCRYPTED'),
  },
  {
    name: 'a ZIP with 10,001 entries',
    folder: 'pdf',
    file: 'many-entries.zip',
    write: writes(() =>
      makeZip(
        Array.from({ length: 10_001 }, (_, i) => ({
          name: `e${i}.pdf`,
          data: 'x',
          method: 'store' as const,
        })),
      ),
    ),
    expected: error('DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES'),
  },
  {
    name: 'a ZIP holding a text file beside a PDF',
    folder: 'pdf',
    file: 'mixed.zip',
    write: writes(async () =>
      makeZip([
        { name: 'a.pdf', data: await pdfOf('mixed') },
        { name: 'readme.txt', data: 'hello' },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_ENTRY_TYPE'),
  },
  {
    name: 'a ZIP holding a corrupt PDF',
    folder: 'pdf',
    file: 'corrupt-entry.zip',
    write: writes(() => makeZip([{ name: 'bad.pdf', data: garbagePdf() }])),
    expected: error('DOCEX_INPUT_PDF_CORRUPT'),
  },
  {
    name: 'a truncated ZIP',
    folder: 'pdf',
    file: 'cut.zip',
    write: writes(async () => {
      const zip = makeZip([{ name: 'a.pdf', data: await pdfOf('cut zip') }]);
      return zip.subarray(0, zip.length - 30);
    }),
    expected: error('DOCEX_INPUT_ZIP_CORRUPT'),
  },
  // --- DATA_FILE: CSV and XML ----------------------------------------------------------------------
  {
    name: 'a ";" CSV with BOM and CRLF line ends',
    folder: 'data',
    file: 'customers-excel.csv',
    write: writes(() => csvBytes(CUSTOMERS, { delimiter: ';', bom: true, crlf: true })),
    expected: archived(),
  },
  {
    name: 'a Latin-1 CSV (invalid UTF-8)',
    folder: 'data',
    file: 'customers-latin1.csv',
    write: writes(() => latin1Csv(CUSTOMERS)),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UTF-16 CSV',
    folder: 'data',
    file: 'customers-utf16.csv',
    write: writes(() => utf16Csv(CUSTOMERS)),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a CSV with ragged rows',
    folder: 'data',
    file: 'customers-ragged.csv',
    write: writes(() =>
      csvBytes([...CUSTOMERS, ['C002', 'Short Row'], ['C003', 'A', 'a@example.com', '1', 'extra']], {
        delimiter: ';',
      }),
    ),
    expected: error('DOCEX_INPUT_CSV_RAGGED'),
  },
  {
    name: 'a CSV with an unterminated quote',
    folder: 'data',
    file: 'customers-quote.csv',
    write: writes(() => 'customerId,name\nC001,"Never closed\nC002,Bob\n'),
    expected: error('DOCEX_INPUT_CSV_MALFORMED'),
  },
  {
    name: 'an HTML error page saved as .csv',
    folder: 'data',
    file: 'export.csv',
    write: writes(() => HTML_ERROR_PAGE),
    expected: error('DOCEX_INPUT_TYPE_MISMATCH'),
  },
  {
    name: 'an XML billion-laughs bomb (DATA_FILE)',
    folder: 'data',
    file: 'lolz.xml',
    write: writes(() => BILLION_LAUGHS),
    expected: error('DOCEX_INPUT_XML_DTD'),
  },
  {
    name: 'an XML external entity reading /etc/passwd (DATA_FILE)',
    folder: 'data',
    file: 'xxe.xml',
    write: writes(() => EXTERNAL_ENTITY),
    expected: error('DOCEX_INPUT_XML_DTD'),
  },
  {
    name: 'an XML file nested 100,000 elements deep',
    folder: 'data',
    file: 'deep.xml',
    write: writes(() => `<?xml version="1.0"?>\n<r>${'<a>'.repeat(DEEP)}x${'</a>'.repeat(DEEP)}</r>\n`),
    expected: error('DOCEX_INPUT_XML_MALFORMED'),
  },
  {
    name: 'a malformed XML file',
    folder: 'data',
    file: 'malformed.xml',
    write: writes(() => MALFORMED_XML),
    expected: error('DOCEX_INPUT_XML_MALFORMED'),
  },
  // --- UBL -------------------------------------------------------------------------------------------
  {
    name: 'a UBL invoice (Peppol BIS example)',
    folder: 'ubl',
    file: 'invoice-base-example.xml',
    write: writes(UBL_SAMPLE),
    expected: archived(),
  },
  {
    name: 'an XML billion-laughs bomb (UBL)',
    folder: 'ubl',
    file: 'lolz-ubl.xml',
    write: writes(() => BILLION_LAUGHS),
    expected: error('DOCEX_INPUT_XML_DTD'),
  },
  {
    name: 'an XML external entity (UBL)',
    folder: 'ubl',
    file: 'xxe-ubl.xml',
    write: writes(() => EXTERNAL_ENTITY),
    expected: error('DOCEX_INPUT_XML_DTD'),
  },
  {
    name: 'a UBL ZIP with a zip-slip entry',
    folder: 'ubl',
    file: 'ubl-slip.zip',
    write: writes(() => makeZip([{ name: '../invoice.xml', data: UBL_SAMPLE() }])),
    expected: error('DOCEX_INPUT_ZIP_UNSAFE_PATH'),
  },
  // --- payload-word --------------------------------------------------------------------------------
  {
    name: 'a payload-word ";" CSV with BOM and CRLF',
    folder: 'words',
    file: 'mailing-excel.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'extra.customerId', 'data.name'],
          ['zoe@example.com', 'C001', 'Zoë'],
        ],
        { delimiter: ';', bom: true, crlf: true },
      ),
    ),
    expected: archived(1),
  },
  {
    name: 'a payload-word CSV in Latin-1 (invalid UTF-8)',
    folder: 'words',
    file: 'mailing-latin1.csv',
    write: writes(() =>
      latin1Csv([
        ['EMAIL_ADDRESS', 'data.name'],
        ['zoe@example.com', 'Zoé'],
      ]),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a payload-word CSV with ragged rows',
    folder: 'words',
    file: 'mailing-ragged.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'data.name'],
          ['a@example.com', 'Ann'],
          ['b@example.com', 'Bob', 'surplus'],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: error('DOCEX_INPUT_CSV_RAGGED'),
  },
  {
    name: 'a payload-word .json that is not JSON',
    folder: 'words',
    file: 'request.json',
    write: writes(() => '{"workflowId": "wf_payload_word_email", "payload": {'),
    expected: error('DOCEX_INPUT_JSON_MALFORMED'),
  },
  {
    name: 'a payload-word JSON request whose template data is nested 100,000 deep',
    folder: 'words',
    file: 'deep-request.json',
    write: writes(
      () =>
        `{"workflowId":"${SEED.workflows.payloadWordEmail}","jobName":"deep","filename":"deep.docx",` +
        `"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"deep@example.com"}],"extraInfoIdentifiers":[],` +
        `"templateData":{"deep":${deepArray(DEEP)}}}}`,
    ),
    expected: error('DOCEX_INPUT_JSON_MALFORMED'),
  },
  {
    name: 'a payload-word CSV whose data.{path} column is 100,000 levels deep',
    folder: 'words',
    file: 'mailing-deep-column.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', `data.${'a.'.repeat(DEEP)}x`],
          ['deep@example.com', 'value'],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: error('DOCEX_INPUT_PAYLOAD_COLUMNS'),
  },
  {
    name: 'a payload-word XML with a billion-laughs DTD',
    folder: 'words',
    file: 'letters-lolz.xml',
    write: writes(() => BILLION_LAUGHS),
    expected: error('DOCEX_INPUT_XML_DTD'),
  },
  // --- payload-pdf with sidecars -------------------------------------------------------------------
  {
    name: 'a payload-pdf PDF with its JSON sidecar',
    folder: 'letters',
    file: 'letter-good.pdf',
    write: async (target) => {
      const sidecar = { ...LETTER_SIDECAR(), filename: 'letter-good.pdf' };
      await put(target.replace(/\.pdf$/, '.json'), JSON.stringify(sidecar));
      await put(target, await pdfOf('letter good'));
    },
    expected: archived(),
  },
  {
    name: 'a payload-pdf PDF whose sidecar is not JSON',
    folder: 'letters',
    file: 'letter-bad-sidecar.pdf',
    write: async (target) => {
      await put(target.replace(/\.pdf$/, '.json'), 'channelIdentifiers: [EMAIL_ADDRESS=a@example.com]\n');
      await put(target, await pdfOf('letter bad sidecar'));
    },
    expected: error('DOCEX_INPUT_JSON_MALFORMED'),
  },
  {
    name: 'a payload-pdf PDF whose sidecar is nested 100,000 deep',
    folder: 'letters',
    file: 'letter-deep-sidecar.pdf',
    write: async (target) => {
      const sidecar = JSON.stringify({ ...LETTER_SIDECAR(), filename: 'letter-deep-sidecar.pdf' });
      const deep = sidecar.replace('"templateData":{}', `"templateData":{"deep":${deepArray(DEEP)}}`);
      await put(target.replace(/\.pdf$/, '.json'), deep);
      await put(target, await pdfOf('letter deep sidecar'));
    },
    expected: error('DOCEX_INPUT_JSON_MALFORMED'),
  },
  // --- issue 16: files meant to kill, freeze or steer the agent ---------------------------------------
  {
    name: 'a 7 KB PDF whose 64-level page tree lists each next level twice (2^64 pages)',
    folder: 'pdf',
    file: 'page-tree-bomb.pdf',
    write: writes(() => pageTreeBombPdf(64)),
    expected: error('DOCEX_INPUT_PDF_CORRUPT'),
  },
  {
    name: 'a PDF whose object stream inflates to 100 MiB (over inspection.limits.pdfInflate)',
    folder: 'pdf',
    file: 'object-stream-bomb.pdf',
    write: writes(() => objectStreamBombPdf(100 * 1024 * 1024)),
    expected: error('DOCEX_INPUT_TOO_COMPLEX'),
  },
  {
    name: 'a 150-byte PDF whose cross-reference stream lists 2^31 objects in no bytes (/W [0 0 0])',
    folder: 'pdf',
    file: 'endless-xref.pdf',
    write: writes(endlessXrefPdf),
    expected: error('DOCEX_INPUT_PDF_CORRUPT'),
  },
  {
    name: 'a zip bomb cut into 200 entries of 64 KiB, each under the per-entry ratio check',
    folder: 'pdf',
    file: 'split-bomb.zip',
    write: writes(() =>
      makeZip(
        Array.from({ length: 200 }, (_, i) => ({ name: `part-${i}.pdf`, data: Buffer.alloc(64 * 1024) })),
      ),
    ),
    expected: error('DOCEX_INPUT_ZIP_BOMB'),
  },
  {
    name: 'a PDF whose name hides its extension behind a right-to-left override',
    folder: 'pdf',
    file: 'invoice\u202Efdp.exe.pdf',
    write: writes(() => pdfOf('rlo')),
    expected: error('DOCEX_INPUT_BAD_NAME'),
  },
  {
    name: 'a hard link to a file outside the drop folder (the client key, say)',
    folder: 'pdf',
    file: 'hard-link.pdf',
    write: async (target, ctx) => {
      const secret = path.join(ctx.outside, 'hard-secret.pdf');
      writeFileSync(secret, await pdfOf('hard link secret'));
      linkSync(secret, target);
    },
    expected: error('DOCEX_INPUT_HARD_LINK'),
  },
  {
    name: 'a CSV header of 120,000 columns (1.5 MB on one line)',
    folder: 'data',
    file: 'wide.csv',
    write: writes(() =>
      csvBytes([Array.from({ length: 120_000 }, (_, i) => `c${i}`), Array(120_000).fill('1')]),
    ),
    expected: error('DOCEX_INPUT_TOO_COMPLEX'),
  },
  {
    name: 'XML that names the UBL namespace in a comment only',
    folder: 'ubl',
    file: 'not-ubl.xml',
    write: writes(() =>
      UBL_SAMPLE()
        .toString('utf8')
        .replace(
          'xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"',
          'xmlns="urn:example:not-ubl"',
        )
        .replace('<Invoice', '<!-- urn:oasis:names:specification:ubl:schema:xsd:Invoice-2 --><Invoice'),
    ),
    expected: error('DOCEX_INPUT_NOT_UBL'),
  },
  {
    name: 'a payload CSV whose header writes to Object.prototype (`data.__proto__.managedCompanyId`)',
    folder: 'words',
    file: 'proto.csv',
    write: writes(() => 'EMAIL_ADDRESS,data.__proto__.managedCompanyId\nx@example.com,cmp_managed\n'),
    expected: error('DOCEX_INPUT_UNSAFE_KEY'),
  },
  {
    name: 'a payload JSON with a number no double holds (12345678901234567890123)',
    folder: 'words',
    file: 'big-number.json',
    write: writes(
      () =>
        '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],' +
        '"extraInfoIdentifiers":[],"templateData":{"amount":12345678901234567890123}}}',
    ),
    expected: error('DOCEX_INPUT_JSON_NUMBER'),
  },
  {
    name: 'a payload-pdf PDF whose sidecar is 2 MiB (over inspection.limits.sidecarBytes)',
    folder: 'letters',
    file: 'letter-big-sidecar.pdf',
    write: async (target) => {
      const sidecar = {
        ...LETTER_SIDECAR(),
        filename: 'letter-big-sidecar.pdf',
        padding: 'x'.repeat(2 * 1024 * 1024),
      };
      await put(target.replace(/\.pdf$/, '.json'), JSON.stringify(sidecar));
      await put(target, await pdfOf('letter big sidecar'));
    },
    expected: error('DOCEX_INPUT_TOO_COMPLEX'),
  },
  // --- issue 29: ZIP entries obey the rule of dropped names; UTF-16 and UTF-32 said so in every format
  {
    name: 'a PDF whose name has a zero-width space',
    folder: 'pdf',
    file: 'in\u200Bvoice.pdf',
    write: writes(() => pdfOf('zero-width name')),
    expected: error('DOCEX_INPUT_BAD_NAME'),
  },
  {
    name: 'a ZIP whose PDF entry hides its extension behind a right-to-left override',
    folder: 'pdf',
    file: 'zip-entry-rlo.zip',
    write: writes(async () => makeZip([{ name: 'invoice\u202Efdp.exe.pdf', data: await pdfOf('zip rlo') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP with a newline in an entry name',
    folder: 'pdf',
    file: 'zip-entry-newline.zip',
    write: writes(async () => makeZip([{ name: 'two\nlines.pdf', data: await pdfOf('zip newline') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP with a zero-width space in a folder of an entry path',
    folder: 'pdf',
    file: 'zip-entry-zero-width.zip',
    write: writes(async () => makeZip([{ name: 'mar\u200Bch/a.pdf', data: await pdfOf('zip zero width') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP with a C1 control (NEL) in an entry name',
    folder: 'pdf',
    file: 'zip-entry-c1.zip',
    write: writes(async () => makeZip([{ name: 'in\u0085voice.pdf', data: await pdfOf('zip c1') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP whose entry name is flagged UTF-8 but written in Latin-1',
    folder: 'pdf',
    file: 'zip-entry-latin1.zip',
    write: writes(async () =>
      makeZip([
        {
          name: 'facture.pdf',
          nameBytes: Buffer.from('facture-\u00e9.pdf', 'latin1'),
          data: await pdfOf('zip latin1'),
        },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP storing a right-to-left override as UTF-8 bytes without the UTF-8 flag (CP437 shows it harmless)',
    folder: 'pdf',
    file: 'zip-entry-unflagged-rlo.zip',
    write: writes(async () =>
      makeZip([
        {
          name: 'x.pdf',
          nameBytes: Buffer.from('invoice\u202Efdp.exe.pdf'),
          utf8Flag: false,
          data: await pdfOf('zip unflagged rlo'),
        },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP storing a newline byte without the UTF-8 flag (CP437 shows it as "◙")',
    folder: 'pdf',
    file: 'zip-entry-cp437-newline.zip',
    write: writes(async () =>
      makeZip([
        {
          name: 'x.pdf',
          nameBytes: Buffer.from('two\nlines.pdf'),
          utf8Flag: false,
          data: await pdfOf('zip cp437'),
        },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP whose Unicode path field shows "evil.pdf" over a stored "../../evil.pdf"',
    folder: 'pdf',
    file: 'zip-entry-unicode-path-slip.zip',
    write: writes(async () =>
      makeZip([{ name: '../../evil.pdf', unicodePath: 'evil.pdf', data: await pdfOf('zip unicode path') }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_UNSAFE_PATH'),
  },
  {
    name: 'a ZIP with a "./" entry (extracts onto another entry\'s name)',
    folder: 'pdf',
    file: 'zip-entry-dot.zip',
    write: writes(async () => makeZip([{ name: './a.pdf', data: await pdfOf('zip dot') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP with a 300-byte entry name (over NAME_MAX)',
    folder: 'pdf',
    file: 'zip-entry-long-name.zip',
    write: writes(async () => makeZip([{ name: longName(300), data: await pdfOf('zip long name') }])),
    expected: error('DOCEX_INPUT_ZIP_BAD_NAME'),
  },
  {
    name: 'a ZIP holding one name twice with different content',
    folder: 'pdf',
    file: 'zip-duplicate.zip',
    write: writes(async () =>
      makeZip([
        { name: 'invoice.pdf', data: await pdfOf('zip duplicate one') },
        { name: 'invoice.pdf', data: await pdfOf('zip duplicate two') },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_DUPLICATE'),
  },
  {
    name: 'a ZIP holding two names that differ only in case',
    folder: 'pdf',
    file: 'zip-duplicate-case.zip',
    write: writes(async () =>
      makeZip([
        { name: 'Invoice.pdf', data: await pdfOf('zip case one') },
        { name: 'INVOICE.PDF', data: await pdfOf('zip case two') },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_DUPLICATE'),
  },
  {
    name: 'a ZIP holding one accented name in NFC and in NFD',
    folder: 'pdf',
    file: 'zip-duplicate-nfd.zip',
    write: writes(async () =>
      makeZip([
        { name: 're\u00e7u.pdf', data: await pdfOf('zip nfc') },
        { name: 're\u00e7u.pdf'.normalize('NFD'), data: await pdfOf('zip nfd') },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_DUPLICATE'),
  },
  {
    name: 'a UBL ZIP holding one invoice name twice',
    folder: 'ubl',
    file: 'ubl-duplicate.zip',
    write: writes(() =>
      makeZip([
        { name: 'invoice.xml', data: UBL_SAMPLE() },
        { name: 'invoice.xml', data: UBL_SAMPLE() },
      ]),
    ),
    expected: error('DOCEX_INPUT_ZIP_DUPLICATE'),
  },
  {
    name: 'a ZIP with a FIFO entry (Unix mode 010644)',
    folder: 'pdf',
    file: 'zip-entry-fifo.zip',
    write: writes(async () =>
      makeZip([{ name: 'pipe.pdf', data: await pdfOf('zip fifo'), unixMode: 0o010644 }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_NOT_A_FILE'),
  },
  {
    name: 'a ZIP with a character-device entry (Unix mode 020666, /dev/zero-like)',
    folder: 'pdf',
    file: 'zip-entry-device.zip',
    write: writes(async () =>
      makeZip([{ name: 'zero.pdf', data: await pdfOf('zip device'), unixMode: 0o020666 }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_NOT_A_FILE'),
  },
  {
    name: 'a ZIP with a socket entry (Unix mode 0140755)',
    folder: 'pdf',
    file: 'zip-entry-socket.zip',
    write: writes(async () =>
      makeZip([{ name: 'sock.pdf', data: await pdfOf('zip socket'), unixMode: 0o140755 }]),
    ),
    expected: error('DOCEX_INPUT_ZIP_NOT_A_FILE'),
  },
  {
    name: 'a ZIP whose entry names a dropped file may also have (CON.pdf, a space before .pdf, NFD accents)',
    folder: 'pdf',
    file: 'zip-entry-odd-but-fine.zip',
    write: writes(async () =>
      makeZip([
        { name: 'CON.pdf', data: await pdfOf('zip con') },
        { name: 'invoice .pdf', data: await pdfOf('zip space') },
        {
          name: 're\u00e7u-\u00e9t\u00e9.pdf'.normalize('NFD'),
          data: await pdfOf('zip nfd only'),
          unixMode: 0o100644,
        },
      ]),
    ),
    expected: archived(),
  },
  {
    name: 'a UTF-16 CSV without a byte order mark',
    folder: 'data',
    file: 'customers-utf16-no-bom.csv',
    write: writes(() =>
      wideText(csvBytes(CUSTOMERS, { delimiter: ';' }).toString('utf8'), 'UTF-16LE', false),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UTF-32 CSV with its byte order mark',
    folder: 'data',
    file: 'customers-utf32.csv',
    write: writes(() => wideText(csvBytes(CUSTOMERS, { delimiter: ';' }).toString('utf8'), 'UTF-32LE')),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UTF-16BE data XML with its byte order mark',
    folder: 'data',
    file: 'customers-utf16be.xml',
    write: writes(() =>
      wideText(
        '<?xml version="1.0" encoding="UTF-16"?>\n<customers><customer><name>Ann</name></customer></customers>\n',
        'UTF-16BE',
      ),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UTF-16 UBL invoice with its byte order mark',
    folder: 'ubl',
    file: 'invoice-utf16.xml',
    write: writes(() => wideText(UBL_SAMPLE().toString('utf8'), 'UTF-16LE')),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UTF-16 UBL invoice without a byte order mark',
    folder: 'ubl',
    file: 'invoice-utf16-no-bom.xml',
    write: writes(() => wideText(UBL_SAMPLE().toString('utf8'), 'UTF-16LE', false)),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a UBL ZIP holding a UTF-16 invoice',
    folder: 'ubl',
    file: 'ubl-utf16.zip',
    write: writes(() =>
      makeZip([{ name: 'invoice.xml', data: wideText(UBL_SAMPLE().toString('utf8'), 'UTF-16LE') }]),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a payload-word JSON request in UTF-16 with its byte order mark',
    folder: 'words',
    file: 'request-utf16.json',
    write: writes(() =>
      wideText(
        `{"workflowId":"${SEED.workflows.payloadWordEmail}","payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],"extraInfoIdentifiers":[],"templateData":{}}}`,
        'UTF-16LE',
      ),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a payload-word JSON request in UTF-32BE without a byte order mark',
    folder: 'words',
    file: 'request-utf32be.json',
    write: writes(() =>
      wideText(
        '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}],"extraInfoIdentifiers":[],"templateData":{}}}',
        'UTF-32BE',
        false,
      ),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a payload-word XML in UTF-16 with its byte order mark',
    folder: 'words',
    file: 'letters-utf16.xml',
    write: writes(() =>
      wideText(
        '<?xml version="1.0"?>\n<letters><letter><EMAIL_ADDRESS>a@example.com</EMAIL_ADDRESS></letter></letters>\n',
        'UTF-16LE',
      ),
    ),
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  {
    name: 'a payload-pdf PDF whose JSON sidecar is UTF-16',
    folder: 'letters',
    file: 'letter-utf16-sidecar.pdf',
    write: async (target) => {
      const sidecar = JSON.stringify({ ...LETTER_SIDECAR(), filename: 'letter-utf16-sidecar.pdf' });
      await put(target.replace(/\.pdf$/, '.json'), wideText(sidecar, 'UTF-16LE'));
      await put(target, await pdfOf('letter utf16 sidecar'));
    },
    expected: error('DOCEX_INPUT_ENCODING'),
  },
  // --- issue 29: hostile row values. `rows` sends the good rows of a file and refuses the bad ones ----
  {
    name: 'a payload-word CSV row with a NUL byte in a cell, past the 4 KiB the type check reads',
    folder: 'rows',
    file: 'rows-nul.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'data.name', 'data.note'],
          ['ann@example.com', 'Ann', PAST_HEAD],
          ['nul@example.com', 'Null\u0000Byte', ''],
          ['bob@example.com', 'Bob', ''],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: archived(2, [{ label: 'row 3', code: 'DOCEX_INPUT_CONTROL_CHARACTER' }]),
  },
  {
    name: 'payload-word CSV rows with a C1 control (U+009B), a DEL and an escape sequence',
    folder: 'rows',
    file: 'rows-c1.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'data.name', 'extra.customerId', 'data.note'],
          ['ann@example.com', 'Ann', 'C1', PAST_HEAD],
          ['csi@example.com', 'C1 \u009b31m', 'C2', ''],
          ['del@example.com', 'Del', 'C3\u007f', ''],
          ['esc@example.com', '\u001b[2Jcleared\u0007', 'C4', ''],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: archived(1, [
      { label: 'row 3', code: 'DOCEX_INPUT_CONTROL_CHARACTER' },
      { label: 'row 4', code: 'DOCEX_INPUT_CONTROL_CHARACTER' },
      { label: 'row 5', code: 'DOCEX_INPUT_CONTROL_CHARACTER' },
    ]),
  },
  {
    name: 'a payload-word CSV row whose quoted e-mail cell holds a line break and a Bcc header',
    folder: 'rows',
    file: 'rows-newline-email.csv',
    write: writes(
      () =>
        'EMAIL_ADDRESS;data.name\r\n' +
        'ann@example.com;Ann\r\n' +
        '"mallory@example.com\nBcc: victim@example.com";Mallory\r\n' +
        'bob@example.com;"Multi-line\ntemplate text is fine"\r\n',
    ),
    expected: archived(2, [{ label: 'row 3', code: 'DOCEX_INPUT_CONTROL_CHARACTER' }]),
  },
  {
    name: 'a payload-word CSV row whose e-mail address hides a right-to-left override',
    folder: 'rows',
    file: 'rows-bidi-email.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'data.name'],
          ['ann@example.com', 'Ann'],
          ['moc.elpmaxe@\u202enimda', 'Admin'],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: archived(1, [{ label: 'row 3', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' }]),
  },
  {
    name: 'payload-word CSV rows with a zero width space in an e-mail and a zero width joiner in a phone number',
    folder: 'rows',
    file: 'rows-zero-width.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'PHONE_NUMBER', 'data.name'],
          ['pay\u200b@example.com', '+32 470 12 34 56', 'Zwsp'],
          ['ann@example.com', '+32\u200d470123456', 'Zwj'],
          ['bob@example.com', '+32 470 65 43 21', 'Bob'],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: archived(1, [
      { label: 'row 2', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' },
      { label: 'row 3', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' },
    ]),
  },
  {
    name: 'a payload-word JSON item whose Peppol participant id is wrapped in bidi isolates',
    folder: 'rows',
    file: 'rows-bidi-peppol.json',
    write: writes(() =>
      JSON.stringify([
        wordItem('ann@example.com'),
        wordItem('peppol@example.com', [['PEPPOL_RECEIVER_PARTICIPANT_ID', '0208:\u20660123456789\u2069']]),
      ]),
    ),
    expected: archived(1, [{ label: 'item 2', code: 'DOCEX_INPUT_INVISIBLE_CHARACTER' }]),
  },
  {
    name: 'a payload-word JSON item with a lone surrogate escape (\\ud800) in its template data',
    folder: 'rows',
    file: 'rows-surrogate.json',
    write: writes(
      () =>
        `[${JSON.stringify(wordItem('ann@example.com'))},` +
        `${JSON.stringify(wordItem('half@example.com')).replace('"templateData":{}', '"templateData":{"name":"\\ud800"}')}]`,
    ),
    expected: archived(1, [{ label: 'item 2', code: 'DOCEX_INPUT_CONTROL_CHARACTER' }]),
  },
  {
    name: 'a payload-word JSON item naming "value" twice, once as "\\u0076alue" (the last one would be sent)',
    folder: 'rows',
    file: 'rows-duplicate-key.json',
    write: writes(
      () =>
        `[${JSON.stringify(wordItem('ann@example.com'))},` +
        `${JSON.stringify(wordItem('shown@example.com')).replace('"value":"shown@example.com"', '"value":"shown@example.com","\\u0076alue":"sent@example.com"')},` +
        `${JSON.stringify(wordItem('bob@example.com'))}]`,
    ),
    expected: archived(2, [{ label: 'item 2', code: 'DOCEX_INPUT_JSON_DUPLICATE_KEY' }]),
  },
  {
    name: 'a payload-word CSV row whose executionDate has no offset (local time of which zone?)',
    folder: 'rows',
    file: 'rows-execution-local.csv',
    write: writes(() =>
      csvBytes(
        [
          ['EMAIL_ADDRESS', 'data.name', 'executionDate'],
          ['ann@example.com', 'Ann', ''],
          ['local@example.com', 'Local', '2026-12-01 09:00'],
          ['bob@example.com', 'Bob', ''],
        ],
        { delimiter: ';' },
      ),
    ),
    expected: archived(2, [{ label: 'row 3', code: 'DOCEX_INPUT_EXECUTION_DATE' }]),
  },
  {
    name: 'a payload-word JSON item whose sendingEventExecutionDateUtc is already past',
    folder: 'rows',
    file: 'rows-execution-past.json',
    write: writes(() =>
      JSON.stringify([
        wordItem('ann@example.com'),
        { ...wordItem('past@example.com'), sendingEventExecutionDateUtc: '2020-01-01T08:00:00Z' },
      ]),
    ),
    expected: archived(1, [{ label: 'item 2', code: 'DOCEX_INPUT_EXECUTION_DATE' }]),
  },
  {
    name: 'a payload-word JSON request naming templateData twice (onInvalidRow: reject-file)',
    folder: 'words',
    file: 'duplicate-template.json',
    write: writes(() =>
      JSON.stringify(wordItem('ann@example.com')).replace(
        '"templateData":{}',
        '"templateData":{"amount":"10.00"},"templateData":{"amount":"1000.00"}',
      ),
    ),
    expected: error('DOCEX_INPUT_JSON_DUPLICATE_KEY'),
  },
  {
    name: 'a payload-pdf sidecar whose company name carries a right-to-left override',
    folder: 'letters',
    file: 'letter-bidi-name.pdf',
    write: async (target) => {
      const sidecar = JSON.stringify({ ...LETTER_SIDECAR(), filename: 'letter-bidi-name.pdf' }).replace(
        '"Acme NV"',
        '"Acme \\u202eVN"',
      );
      await put(target.replace(/\.pdf$/, '.json'), sidecar);
      await put(target, await pdfOf('letter bidi name'));
    },
    expected: error('DOCEX_INPUT_INVISIBLE_CHARACTER'),
  },
  {
    name: 'a payload-pdf sidecar with a NUL in the street and a line break in the postal code',
    folder: 'letters',
    file: 'letter-control.pdf',
    write: async (target) => {
      const sidecar = JSON.stringify({ ...LETTER_SIDECAR(), filename: 'letter-control.pdf' })
        .replace('"Rue de la Loi"', '"Rue de la Loi\\u0000"')
        .replace('"1000"', '"1000\\n"');
      await put(target.replace(/\.pdf$/, '.json'), sidecar);
      await put(target, await pdfOf('letter control'));
    },
    expected: error('DOCEX_INPUT_CONTROL_CHARACTER'),
  },
  {
    name: 'a payload-pdf sidecar naming channelIdentifiers twice',
    folder: 'letters',
    file: 'letter-duplicate-key.pdf',
    write: async (target) => {
      const sidecar = JSON.stringify({ ...LETTER_SIDECAR(), filename: 'letter-duplicate-key.pdf' }).replace(
        '"extraInfoIdentifiers":',
        '"channelIdentifiers":[],"extraInfoIdentifiers":',
      );
      await put(target.replace(/\.pdf$/, '.json'), sidecar);
      await put(target, await pdfOf('letter duplicate key'));
    },
    expected: error('DOCEX_INPUT_JSON_DUPLICATE_KEY'),
  },
  {
    name: 'a payload-pdf ZIP batch whose index.csv names a company with a zero width joiner',
    folder: 'letters',
    file: 'batch-zero-width.zip',
    write: writes(async () =>
      makeZip([
        { name: 'a.pdf', data: await pdfOf('batch zero width a') },
        { name: 'b.pdf', data: await pdfOf('batch zero width b') },
        {
          name: 'index.csv',
          data: csvBytes(
            [
              [
                'file',
                'ADDRESS_COMPANY_NAME',
                'ADDRESS_STREET',
                'ADDRESS_STREET_NUMBER',
                'ADDRESS_POSTAL_CODE',
                'ADDRESS_CITY',
                'ADDRESS_COUNTRY_CODE',
                'INVOICE_AMOUNT',
                'INVOICE_DUE_DATE',
                'INVOICE_COMMUNICATION',
              ],
              [
                'a.pdf',
                'Acme NV',
                'Rue de la Loi',
                '16',
                '1000',
                'Brussels',
                'BE',
                '1.00',
                '2026-12-15',
                '+++090/9337/55493+++',
              ],
              [
                'b.pdf',
                'Acme\u200d NV',
                'Rue de la Loi',
                '16',
                '1000',
                'Brussels',
                'BE',
                '1.00',
                '2026-12-15',
                '+++090/9337/55493+++',
              ],
            ],
            { delimiter: ';' },
          ),
        },
      ]),
    ),
    expected: error('DOCEX_INPUT_INVISIBLE_CHARACTER'),
  },
  // --- the sub-folders of a recursive folder: a sub-folder's name is as hostile as a file's -------
  {
    name: 'a PDF in a sub-folder whose name has a newline',
    folder: 'tree',
    file: 'two\nlines/in-newline-folder.pdf',
    write: async (_target, ctx) =>
      putFolder(ctx.folderPath('tree'), 'two\nlines', 'in-newline-folder.pdf', await pdfOf('newline folder')),
    expected: left('the sub-folder is not entered: its name is not a valid file name', 'two\nlines'),
  },
  {
    name: 'a PDF in a sub-folder whose name has a backslash',
    folder: 'tree',
    file: 'back\\slash/in-backslash-folder.pdf',
    write: async (_target, ctx) =>
      putFolder(
        ctx.folderPath('tree'),
        'back\\slash',
        'in-backslash-folder.pdf',
        await pdfOf('backslash folder'),
      ),
    expected: archived(),
  },
  {
    name: 'a PDF in a sub-folder whose name is 255 bytes long',
    folder: 'tree',
    file: `${LONG_FOLDER}/in-long-folder.pdf`,
    write: async (_target, ctx) =>
      putFolder(ctx.folderPath('tree'), LONG_FOLDER, 'in-long-folder.pdf', await pdfOf('long folder')),
    expected: archived(),
  },
  {
    name: 'a PDF in a sub-folder whose name is Latin-1, not UTF-8',
    folder: 'tree',
    file: 'dossier-\ufffd/in-latin1-folder.pdf',
    nameBytes: Buffer.from('dossier-\u00e9/in-latin1-folder.pdf', 'latin1'),
    write: async (_target, ctx) =>
      putFolder(
        ctx.folderPath('tree'),
        Buffer.from('dossier-\u00e9', 'latin1'),
        'in-latin1-folder.pdf',
        await pdfOf('latin1 folder'),
      ),
    expected: left('the sub-folder is not entered: its name is not UTF-8', 'dossier-\ufffd'),
  },
  {
    name: 'a sub-folder that is a symbolic link to a folder outside the drop folder',
    folder: 'tree',
    file: 'linked-folder',
    write: async (target, ctx) => {
      const outside = path.join(ctx.outside, 'folder');
      await fs.mkdir(outside, { recursive: true });
      await fs.writeFile(path.join(outside, 'secret-in-folder.pdf'), await pdfOf('outside folder secret'));
      await fs.symlink(outside, target);
    },
    expected: error('DOCEX_INPUT_SYMLINK'),
  },
  {
    name: 'a FIFO (named pipe) with a .pdf name in a sub-folder',
    folder: 'tree',
    file: 'pipes/pipe-in-folder.pdf',
    write: async (target) => {
      await fs.mkdir(path.dirname(target), { recursive: true });
      execFileSync('mkfifo', [target]);
    },
    expected: error('DOCEX_INPUT_NOT_A_FILE'),
  },
  {
    name: 'a PDF in a sub-folder named .processing one level down',
    folder: 'tree',
    file: 'acme/.processing/in-hidden-folder.pdf',
    write: async (_target, ctx) => {
      await fs.mkdir(path.join(ctx.folderPath('tree'), 'acme'), { recursive: true });
      await putFolder(
        path.join(ctx.folderPath('tree'), 'acme'),
        '.processing',
        'in-hidden-folder.pdf',
        await pdfOf('hidden folder'),
      );
    },
    expected: left('the sub-folder is not entered: hidden, like the agent’s own `.processing`'),
  },
];

/** "archived (1 job)" or "error DOCEX_…": the words used in test names and the doc. */
export function expectedText(expected: Expected): string {
  if (expected.outcome === 'error') return `error ${expected.code}`;
  if (expected.outcome === 'left') return 'left in place';
  const refused = (expected.refused ?? []).map((r) => `; ${r.label} refused, ${r.code}`).join('');
  return `archived (${expected.jobs} job${expected.jobs === 1 ? '' : 's'}${refused})`;
}
