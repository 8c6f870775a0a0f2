/**
 * The one rule for the names of files the agent takes: a file dropped into a folder and an entry
 * inside a dropped ZIP are judged by the same function, so a name refused on its own is refused in
 * an archive too. The sandbox judges ZIP entries with it as well. Plain values in, plain values out.
 */
import { isUtf8 } from 'node:buffer';
import { escapeCodePoint } from '../core/escape.js';

/** What is wrong with one name (one path segment). */
export type NameFault = 'control' | 'not-utf8' | 'empty' | 'dot' | 'slash' | 'too-long';

/**
 * Characters a name may not hold: C0 and C1 controls, the line and paragraph separators, and
 * Unicode format characters (bidi overrides such as U+202E that show `fdp.exe` as `exe.pdf`,
 * zero-width characters, the soft hyphen): what a reader sees must be what the name is.
 */
const UNSAFE_NAME_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/u;

/** NAME_MAX of Linux and most file systems, in UTF-8 bytes. */
export const NAME_MAX_BYTES = 255;

/** The sentence end each fault gets in a reason: "The file name "x" <words>". */
export const NAME_FAULT_WORDS: Readonly<Record<NameFault, string>> = {
  control: 'contains control or invisible formatting characters',
  'not-utf8': 'is not valid UTF-8 (each \ufffd stands for a byte that is not)',
  empty: 'is empty',
  dot: 'is "." or ".."',
  slash: 'contains a "/"',
  'too-long': `is longer than ${NAME_MAX_BYTES} bytes`,
};

/**
 * A file name as it appears in a reason: quoted, with newlines and other controls escaped, and
 * invisible format characters (a right-to-left override) too, so a reason reads as it is.
 */
export function quoteName(name: string): string {
  return JSON.stringify(name).replace(/[\u007f-\u009f\u2028\u2029\p{Cf}]/gu, escapeCodePoint);
}

/** Judges one name (no folders): undefined when it may be taken. */
export function nameFault(name: string): NameFault | undefined {
  if (UNSAFE_NAME_CHARACTERS.test(name)) return 'control';
  if (name === '') return 'empty';
  if (name === '.' || name === '..') return 'dot';
  if (name.includes('/')) return 'slash';
  if (Buffer.byteLength(name, 'utf8') > NAME_MAX_BYTES) return 'too-long';
  return undefined;
}

/** Whether a name's raw bytes are UTF-8 (a Latin-1 name from an old ERP is not). */
export function nameBytesAreUtf8(bytes: Uint8Array): boolean {
  return isUtf8(bytes);
}

/**
 * How two names are compared for sameness: NFC and lower case, as a case-insensitive or
 * normalising file system (Windows, macOS) sees them. Two names with one key are one file there.
 */
export function sameNameKey(name: string): string {
  return name.normalize('NFC').toLowerCase();
}

/** An archive entry as its central directory record describes it. */
export interface ArchiveEntryRecord {
  /** The name as the ZIP format reads it (UTF-8 flag, Unicode path field, else CP437). */
  name: string;
  /** The name's bytes as stored. */
  rawName: Buffer;
  /** General purpose flag bit 11: the stored name is UTF-8. */
  utf8Flag: boolean;
  versionMadeBy: number;
  externalFileAttributes: number;
}

/** The record of an entry as yauzl lists it (its `Entry`, by shape: the domain imports no reader). */
export function recordOfEntry(entry: {
  fileName: string;
  fileNameRaw: Buffer;
  generalPurposeBitFlag: number;
  versionMadeBy: number;
  externalFileAttributes: number;
}): ArchiveEntryRecord {
  return {
    name: entry.fileName,
    rawName: entry.fileNameRaw,
    utf8Flag: (entry.generalPurposeBitFlag & 0x800) !== 0,
    versionMadeBy: entry.versionMadeBy,
    externalFileAttributes: entry.externalFileAttributes,
  };
}

/** What an entry is by its recorded type; only files and folders are taken. */
export type EntryType =
  | 'file'
  | 'folder'
  | 'symbolic link'
  | 'FIFO'
  | 'character device'
  | 'block device'
  | 'socket'
  | 'unknown type';

export type ArchiveEntryFault =
  | { kind: 'unsafe-path'; reading: string }
  | { kind: 'name'; fault: NameFault; segment: string }
  | { kind: 'type'; type: Exclude<EntryType, 'file' | 'folder'> }
  | { kind: 'folder-as-file' };

const S_IFMT = 0o170000;
const UNIX_TYPES: ReadonlyMap<number, EntryType> = new Map([
  [0o100000, 'file'],
  [0o040000, 'folder'],
  [0o120000, 'symbolic link'],
  [0o010000, 'FIFO'],
  [0o020000, 'character device'],
  [0o060000, 'block device'],
  [0o140000, 'socket'],
]);
/** "Made by" hosts whose external attributes carry a Unix mode in their high 16 bits. */
const UNIX_HOSTS: ReadonlySet<number> = new Set([3, 19]);
const DOS_DIRECTORY = 0x10;

/**
 * The entry's type by its recorded attributes: the Unix mode when the "made by" host is Unix (or
 * macOS), else the MS-DOS folder bit; a record that says nothing is a file or a folder by its name.
 */
export function entryType(
  entry: Pick<ArchiveEntryRecord, 'name' | 'versionMadeBy' | 'externalFileAttributes'>,
): EntryType {
  const byName: EntryType = entry.name.endsWith('/') ? 'folder' : 'file';
  const host = entry.versionMadeBy >> 8;
  if (UNIX_HOSTS.has(host)) {
    const format = (entry.externalFileAttributes >>> 16) & S_IFMT;
    if (format === 0) return byName;
    return UNIX_TYPES.get(format) ?? 'unknown type';
  }
  return (entry.externalFileAttributes & DOS_DIRECTORY) !== 0 ? 'folder' : byName;
}

/** Bytes that are controls in every ASCII-based encoding, whatever the name is decoded as. */
const hasControlByte = (bytes: Buffer) => bytes.some((b) => b < 0x20 || b === 0x7f);

/**
 * The readings of an entry's name that some unzip program shows: the format's own (what yauzl
 * gives: the UTF-8 flag, a Unicode path field, else CP437), and the stored bytes as UTF-8 when they
 * are UTF-8, since many programs ignore the flag and the Unicode path field.
 */
function readings(entry: ArchiveEntryRecord): string[] {
  const raw = entry.rawName;
  const asUtf8 = nameBytesAreUtf8(raw) ? raw.toString('utf8') : undefined;
  return asUtf8 === undefined || asUtf8 === entry.name ? [entry.name] : [entry.name, asUtf8];
}

/** Absolute (`/x`, `C:x`), climbing out (`..`) or with a backslash, which some programs take for "/". */
function isUnsafePath(reading: string): boolean {
  return (
    reading.includes('\\') ||
    reading.startsWith('/') ||
    /^[a-zA-Z]:/.test(reading) ||
    reading.split('/').includes('..')
  );
}

/**
 * Judges an archive entry by where it would be written (never outside the archive's folder), by
 * the rule of dropped names, segment by segment (a folder entry's trailing "/" aside), and by its
 * type. Every reading of the name is judged, so no unzip program sees a name the agent did not.
 */
export function archiveEntryFault(entry: ArchiveEntryRecord): ArchiveEntryFault | undefined {
  // The path checks look at ASCII only: the stored bytes as Latin-1 serve for any encoding.
  for (const reading of [entry.name, entry.rawName.toString('latin1')]) {
    if (isUnsafePath(reading)) return { kind: 'unsafe-path', reading };
  }
  if (entry.utf8Flag && !nameBytesAreUtf8(entry.rawName)) {
    return { kind: 'name', fault: 'not-utf8', segment: entry.name };
  }
  if (hasControlByte(entry.rawName)) return { kind: 'name', fault: 'control', segment: entry.name };
  for (const reading of readings(entry)) {
    const segments = (reading.endsWith('/') ? reading.slice(0, -1) : reading).split('/');
    for (const segment of segments) {
      const fault = nameFault(segment);
      if (fault) return { kind: 'name', fault, segment };
    }
  }
  const type = entryType(entry);
  if (type === 'folder' && !entry.name.endsWith('/')) return { kind: 'folder-as-file' };
  if (type !== 'file' && type !== 'folder') return { kind: 'type', type };
  return undefined;
}

interface NameNode {
  /** The entry that made this name: itself, or one lying in this folder. */
  entry: string;
  folder: boolean;
  children: Map<string, NameNode>;
}

/**
 * The names an archive holds, compared by sameNameKey: a file may not share its key with another
 * entry, nor with a folder another entry lies in (`a.pdf` beside `A.PDF`, or `x` beside `x/y.pdf`).
 * Kept as a tree of segments, so a hostile deep path costs its length once.
 */
export class ArchiveNames {
  private readonly root = new Map<string, NameNode>();

  /** Records an entry; answers the earlier entry it clashes with, if any. */
  add(name: string): string | undefined {
    const isFolder = name.endsWith('/');
    const segments = sameNameKey(isFolder ? name.slice(0, -1) : name).split('/');
    let level = this.root;
    for (const [i, segment] of segments.entries()) {
      const folder = isFolder || i < segments.length - 1;
      const earlier = level.get(segment);
      if (earlier === undefined) {
        const node: NameNode = { entry: name, folder, children: new Map() };
        level.set(segment, node);
        level = node.children;
      } else if (earlier.folder && folder) {
        level = earlier.children;
      } else {
        return earlier.entry;
      }
    }
    return undefined;
  }
}
