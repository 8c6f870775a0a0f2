/**
 * The check a claimed file passes before any job is created: a regular file with a sane name,
 * within the size limit, of a type the folder's workflow takes (by extension and by content), and
 * well-formed for that type. The answer is a plain value; nothing here logs or throws for a bad
 * file, so the caller decides what a rejection becomes (a report, a moved file, a status line).
 */
import { constants } from 'node:fs';
import { lstat, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import { NAME_FAULT_WORDS, nameFault } from '../../domain/file-names.js';
import { type InputRejection, mib, quoteName, reject } from './codes.js';
import { inspectCsvBytes } from './csv.js';
import { type DetectedType, detectType, HEAD_BYTES } from './detect-type.js';
import { inspectJsonBytes } from './json.js';
import { checkPdfBytes, inspectPdfFile, PDF_PARSE_MAX_BYTES } from './pdf.js';
import { rejectWideText } from './text.js';
import { inspectXmlBytes } from './xml.js';
import { DEFAULT_ZIP_LIMITS, inspectZipFile, type ZipLimits } from './zip.js';
import { zipPolicy } from './zip-policies.js';

export type InputKind = 'pdf' | 'zip' | 'xml' | 'csv' | 'json';

export type Inspection =
  | { ok: true; kind: InputKind; size: number; details: Record<string, unknown> }
  | InputRejection;

export interface InspectLimits {
  /** PDFs up to this size are parsed with pdf-lib; larger ones by their ends and structure (pdf-structure.ts). */
  pdfParseMaxBytes: number;
  /** CSV, XML and JSON files are parsed in memory, so they may not be larger than this. */
  textMaxBytes: number;
  zip: ZipLimits;
}

export const DEFAULT_INSPECT_LIMITS: InspectLimits = {
  pdfParseMaxBytes: PDF_PARSE_MAX_BYTES,
  textMaxBytes: 64 * 1024 * 1024,
  zip: DEFAULT_ZIP_LIMITS,
};

export interface InspectOptions {
  path: string;
  /** The name the ERP gave the file (may differ from the path's base name once claimed). */
  fileName: string;
  /** The workflow's `inputSource.type`: PDF, DATA_FILE, UBL, PAYLOAD_PDF or PAYLOAD_WORD. */
  inputSourceType: string;
  maxBytes: number;
  limits?: Partial<InspectLimits>;
  /** Take a file with more than one hard link (rejected by default: it may be a link to a secret). */
  allowHardLinks?: boolean;
  /**
   * The whole file, when the caller already read it from a descriptor opened without following
   * links (a small file at its claim): nothing is read again.
   */
  bytes?: Buffer;
}

/** Extensions each input source takes (decisions, Workflows; payload files per issue 3). */
export const ACCEPTED_EXTENSIONS: Readonly<Record<string, Readonly<Record<string, InputKind>>>> = {
  PDF: { '.pdf': 'pdf', '.zip': 'zip' },
  DATA_FILE: { '.csv': 'csv', '.xml': 'xml' },
  UBL: { '.xml': 'xml', '.zip': 'zip' },
  PAYLOAD_PDF: { '.pdf': 'pdf', '.json': 'json', '.zip': 'zip', '.csv': 'csv' },
  PAYLOAD_WORD: { '.csv': 'csv', '.json': 'json', '.xml': 'xml' },
};

const CONTENT_OF: Record<InputKind, DetectedType> = {
  pdf: 'pdf',
  zip: 'zip',
  xml: 'xml',
  csv: 'text',
  json: 'json',
};
const TYPE_WORDS: Record<DetectedType, string> = {
  pdf: 'a PDF',
  zip: 'a ZIP archive',
  xml: 'XML (or HTML)',
  json: 'JSON',
  text: 'plain text',
  unknown: 'binary data of an unknown type',
};

async function readHead(filePath: string): Promise<Buffer> {
  // O_NOFOLLOW: a link swapped in after lstat is still rejected.
  const handle = await open(filePath, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const head = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, HEAD_BYTES, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

async function checkContent(
  opts: InspectOptions,
  kind: InputKind,
  size: number,
  limits: InspectLimits,
): Promise<{ ok: true; details: Record<string, unknown> } | InputRejection> {
  const { fileName, inputSourceType: source } = opts;
  if (kind === 'pdf') {
    const checked =
      opts.bytes && size <= limits.pdfParseMaxBytes
        ? await checkPdfBytes(opts.bytes, fileName)
        : await inspectPdfFile(opts.path, fileName, size, limits.pdfParseMaxBytes);
    return checked.ok ? { ok: true, details: { ...checked.details } } : checked;
  }
  if (kind === 'zip') {
    const checked = await inspectZipFile(opts.path, fileName, zipPolicy(source), limits.zip);
    if (checked.ok && source === 'PAYLOAD_PDF' && !checked.details.entries.includes('index.csv')) {
      return reject(
        'DOCEX_INPUT_BATCH_INDEX',
        `${quoteName(fileName)} is a payload-pdf batch without an index.csv naming each PDF's identifiers.`,
      );
    }
    return checked.ok ? { ok: true, details: { ...checked.details } } : checked;
  }
  if (size > limits.textMaxBytes) {
    return reject(
      'DOCEX_INPUT_TOO_LARGE',
      `${quoteName(fileName)} is ${mib(size)}; text files over ${mib(limits.textMaxBytes)} cannot be checked.`,
      { size, limit: limits.textMaxBytes },
    );
  }
  const bytes = opts.bytes ?? (await readFile(opts.path));
  if (kind === 'csv') return inspectCsvBytes(bytes, fileName);
  if (kind === 'json') return inspectJsonBytes(bytes, fileName);
  return inspectXmlBytes(bytes, fileName, source === 'UBL' ? 'ubl' : 'data');
}

export async function inspectFile(opts: InspectOptions): Promise<Inspection> {
  const { fileName, inputSourceType: source } = opts;
  const limits: InspectLimits = { ...DEFAULT_INSPECT_LIMITS, ...opts.limits };
  const name = quoteName(fileName);
  const fault = nameFault(fileName);
  if (fault) {
    return reject(
      'DOCEX_INPUT_BAD_NAME',
      `The file name ${name} ${NAME_FAULT_WORDS[fault]}; rename the file.`,
      {
        fault,
      },
    );
  }
  const accepted = ACCEPTED_EXTENSIONS[source];
  if (!accepted) {
    return reject(
      'DOCEX_INPUT_WRONG_FOR_WORKFLOW',
      `${name} cannot be sent: input source ${source} takes no files.`,
    );
  }
  try {
    // Held bytes were read from a descriptor opened without following links: their size is the
    // truth, the path is asked only for its hard links.
    const stat = opts.bytes
      ? {
          isSymbolicLink: () => false,
          isFile: () => true,
          size: opts.bytes.length,
          nlink: (await lstat(opts.path).catch(() => undefined))?.nlink ?? 1,
        }
      : await lstat(opts.path);
    if (stat.isSymbolicLink()) {
      return reject(
        'DOCEX_INPUT_SYMLINK',
        `${name} is a symbolic link; drop the file itself, not a link to it.`,
      );
    }
    if (!stat.isFile()) return reject('DOCEX_INPUT_NOT_A_FILE', `${name} is not a regular file.`);
    if (stat.nlink > 1 && !opts.allowHardLinks) {
      return reject(
        'DOCEX_INPUT_HARD_LINK',
        `${name} has ${stat.nlink} hard links; a linked file may be any file of this machine. Drop a copy, or set allowHardLinks on the folder.`,
        { links: stat.nlink },
      );
    }
    const size = stat.size;
    if (size === 0) return reject('DOCEX_INPUT_EMPTY', `${name} is empty (0 bytes).`);
    if (size > opts.maxBytes) {
      return reject(
        'DOCEX_INPUT_TOO_LARGE',
        `${name} is ${mib(size)}, over the limit of ${mib(opts.maxBytes)}.`,
        {
          size,
          limit: opts.maxBytes,
        },
      );
    }
    const ext = path.extname(fileName).toLowerCase();
    const kind = accepted[ext];
    if (!kind) {
      const list = Object.keys(accepted).join(', ');
      return reject(
        'DOCEX_INPUT_WRONG_FOR_WORKFLOW',
        `${name} is not a file the workflow's ${source} input source takes (${list}).`,
        { extension: ext, accepted: Object.keys(accepted) },
      );
    }
    const head = opts.bytes ? opts.bytes.subarray(0, HEAD_BYTES) : await readHead(opts.path);
    // Before the type check: UTF-16 JSON is rejected for its encoding, not taken for "plain text".
    const wide = kind === 'pdf' || kind === 'zip' ? undefined : rejectWideText(head, fileName);
    if (wide) return wide;
    const detected = detectType(head);
    if (detected !== CONTENT_OF[kind]) {
      const code = detected === 'unknown' ? 'DOCEX_INPUT_UNKNOWN_TYPE' : 'DOCEX_INPUT_TYPE_MISMATCH';
      return reject(code, `${name} is named ${ext} but its content is ${TYPE_WORDS[detected]}.`, {
        extension: ext,
        detected,
      });
    }
    const checked = await checkContent(opts, kind, size, limits);
    return checked.ok ? { ok: true, kind, size, details: checked.details } : checked;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return reject('DOCEX_INPUT_UNREADABLE', `${name} could not be read: ${e.code ?? e.message}.`, {
      errno: e.code,
    });
  }
}
