/**
 * Names of the files written for the ERP, pure: the proof name template, and the status file of
 * a dropped file. Every value put into a name is made safe for a file name on Windows and POSIX.
 */
import path from 'node:path';
import { relativeSegments } from '../domain/relative-path.js';

export interface ProofNameInput {
  /** UTC day the source file was claimed, YYYY-MM-DD. */
  date: string;
  folder: string;
  /** The dropped file's name, e.g. `invoice-0001.pdf`. */
  file: string;
  /** The sub-folders of a recursive folder it was dropped in (`['acme', 'invoices']`). */
  subFolders?: readonly string[];
  jobId: string;
  sendingEventId: string;
  type: string;
  fileReference: string;
  /** The document's own name and content type, to pick the extension. */
  documentName?: string | undefined;
  contentType?: string | undefined;
}

const CONTENT_TYPE_EXT: Record<string, string> = {
  'application/pdf': 'pdf',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/json': 'json',
  'text/csv': 'csv',
  'text/plain': 'txt',
  'application/zip': 'zip',
  'text/html': 'html',
};

/** One path segment: no separators, control or reserved characters, no leading dot, at most 120 chars. */
export function safeSegment(value: string): string {
  const cleaned = value
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f<>:"/\\|?*]+/g, '_')
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '')
    .slice(0, 120);
  return cleaned === '' ? '_' : cleaned;
}

export function stemOf(file: string): string {
  const ext = path.extname(file);
  return ext && ext !== file ? file.slice(0, -ext.length) : file;
}

export function extensionOf(documentName: string | undefined, contentType: string | undefined): string {
  const fromName = documentName ? path.extname(documentName).slice(1).toLowerCase() : '';
  if (/^[a-z0-9]{1,8}$/.test(fromName)) return fromName;
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  return (type && CONTENT_TYPE_EXT[type]) ?? 'bin';
}

/**
 * A dropped file as the returns store keeps it, its path relative to the drop folder
 * (`acme/invoices/x.pdf` in a recursive folder): its sub-folders and its name. A path that is not
 * one the intake takes (a segment `..`, a control character) is a name alone, made safe as a value.
 */
export function splitFile(file: string): { subFolders: string[]; name: string } {
  const segments = relativeSegments(file);
  if (segments === undefined || segments.length < 2) return { subFolders: [], name: file };
  return { subFolders: segments.slice(0, -1), name: segments[segments.length - 1]! };
}

/** `acme/invoices/`: sub-folders as a path prefix, each a safe segment ('' for none). */
function prefixOf(subFolders: readonly string[] | undefined): string {
  return (subFolders ?? [])
    .filter((part) => part !== '' && part !== '.' && part !== '..')
    .map((part) => `${safeSegment(part)}/`)
    .join('');
}

/**
 * The template filled in; `/` in the template separates folders, never a value. The sub-folders
 * a file of a recursive folder was dropped in come first (`acme/invoices/<template>`).
 */
export function proofPath(template: string, input: ProofNameInput): string {
  const prefix = prefixOf(input.subFolders);
  const values: Record<string, string> = {
    date: input.date,
    folder: input.folder,
    file: input.file,
    stem: stemOf(input.file),
    jobId: input.jobId,
    sendingEventId: input.sendingEventId,
    type: input.type,
    fileReference: input.fileReference,
    ext: extensionOf(input.documentName, input.contentType),
  };
  return (
    prefix +
    template
      .split('/')
      .filter((part) => part !== '' && part !== '.' && part !== '..')
      .map((part) =>
        safeSegment(part.replace(/<([A-Za-z]+)>/g, (_m, key: string) => safeSegment(values[key] ?? ''))),
      )
      .join('/')
  );
}

/** The dropped file and job a proof belongs to, as the returns store keeps them. */
export interface ProofOwner {
  /** UTC day the source file was claimed, YYYY-MM-DD. */
  day: string;
  folder: string;
  /** Its path relative to the drop folder (its name, or `acme/invoices/x.pdf`): see splitFile. */
  fileName: string;
  jobId: string;
}

/** A document of a sending event, as the service lists it. */
export interface ProofDocument {
  type: string;
  fileReference: string;
  name?: string | undefined;
  contentType?: string | undefined;
}

/** The template's name of one document of one sending event of a job. */
export function proofName(
  template: string,
  owner: ProofOwner,
  sendingEventId: string,
  document: ProofDocument,
): string {
  const { subFolders, name } = splitFile(owner.fileName);
  return proofPath(template, {
    date: owner.day,
    folder: owner.folder,
    file: name,
    subFolders,
    jobId: owner.jobId,
    sendingEventId,
    type: document.type,
    fileReference: document.fileReference,
    documentName: document.name,
    contentType: document.contentType,
  });
}

/** `name.ext` → `name-<suffix>.ext` (the extension of the last segment only). */
function withSuffix(target: string, suffix: string): string {
  const ext = target.lastIndexOf('.');
  const cut = ext > target.lastIndexOf('/') ? ext : target.length;
  return `${target.slice(0, cut)}-${suffix}${target.slice(cut)}`;
}

/**
 * The names to try, in order, for a document whose template name `named` is taken (a template
 * without `<fileReference>` gives two documents of one type the same name): the file reference
 * added, then a counter after it. Endless: the caller takes the first that is free.
 */
export function* namesWhenTaken(named: string, fileReference: string): Generator<string, never> {
  const base = withSuffix(named, safeSegment(stemOf(fileReference)));
  yield base;
  for (let n = 2; ; n++) yield withSuffix(base, String(n));
}

/**
 * `YYYY-MM-DD/<file>.status.json`; a later drop of the same name that day gets its item id too. A
 * file of a recursive folder's sub-folder (`acme/invoices/x.pdf`) keeps its sub-path above the day:
 * `acme/invoices/YYYY-MM-DD/x.pdf.status.json`.
 */
export function statusFilePath(date: string, file: string, itemId: number, collision: boolean): string {
  const { subFolders, name: base } = splitFile(file);
  const name = collision ? `${base}.${itemId}.status.json` : `${base}.status.json`;
  return `${prefixOf(subFolders)}${date}/${safeSegment(name)}`;
}

export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
