/**
 * ZIP archives are listed before anything is extracted: every entry's name, type, encryption and
 * declared sizes are judged from the central directory first. Names and types obey the rule of
 * dropped files (domain/file-names.ts: the same function), and no two entries share a name. Only then is each entry read, one at
 * a time, and checked like a dropped file of its type; yauzl refuses an entry whose data is larger
 * than its declared size, so the declared sizes can be trusted for the bomb limits.
 */
import path from 'node:path';
import type { Readable } from 'node:stream';
import type yauzl from 'yauzl';
import { lazyRequire } from '../../core/lazy-require.js';
import { ArchiveNames, archiveEntryFault, NAME_FAULT_WORDS, recordOfEntry } from '../../domain/file-names.js';
import { type InputRejection, mib, quoteName, reject } from './codes.js';
import { detectType } from './detect-type.js';

const zipLib = lazyRequire<typeof yauzl>('yauzl');

export interface ZipLimits {
  maxEntries: number;
  /** Largest uncompressed / compressed ratio of one entry, and of all entries together... */
  maxRatio: number;
  /**
   * ...applied to an entry, or to the whole archive, that expands beyond this many bytes (tiny
   * entries compress freely). The whole archive is judged too, so a bomb cut into many small
   * entries expands no further than one big entry would.
   */
  ratioMinBytes: number;
  /** Largest sum of the uncompressed sizes. */
  maxTotalBytes: number;
  /** Entries up to this size are read whole and checked; larger ones only by their first bytes. */
  entryCheckMaxBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 10_000,
  maxRatio: 100,
  ratioMinBytes: 64 * 1024,
  maxTotalBytes: 4 * 1024 * 1024 * 1024,
  entryCheckMaxBytes: 16 * 1024 * 1024,
};

/** Which entries an archive may hold, and how each is checked once read. */
export interface ZipEntryPolicy {
  /** What the workflow takes, for the reason: "PDF files". */
  label: string;
  accepts(entryName: string): boolean;
  /**
   * Check of one entry, named `entryName` in the rejection; `complete` is false when only the first
   * bytes of a large entry were read.
   */
  check?(bytes: Buffer, entryName: string, complete: boolean): Promise<InputRejection | undefined>;
}

export interface ZipDetails {
  entries: string[];
  totalUncompressedBytes: number;
}

const ARCHIVE_EXTENSIONS = new Set([
  '.zip',
  '.7z',
  '.rar',
  '.gz',
  '.tgz',
  '.tar',
  '.bz2',
  '.xz',
  '.jar',
  '.cab',
]);

/** An entry's name or type that a dropped file would be rejected for (domain/file-names.ts). */
function judgeNameAndType(entry: yauzl.Entry, at: string): InputRejection | undefined {
  const fault = archiveEntryFault(recordOfEntry(entry));
  if (!fault) return undefined;
  const details = { entry: entry.fileName };
  if (fault.kind === 'unsafe-path') {
    return reject(
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      `${at} is also stored as ${quoteName(fault.reading)}, an unsafe name ` +
        '(absolute, climbing out with "..", or with a backslash) for programs that read it so; such an archive could write outside its folder.',
      details,
    );
  }
  if (fault.kind === 'name') {
    const which = fault.segment === entry.fileName ? 'its name' : `its name ${quoteName(fault.segment)}`;
    return reject(
      'DOCEX_INPUT_ZIP_BAD_NAME',
      `${at}: ${which} ${NAME_FAULT_WORDS[fault.fault]}, as no dropped file's name may; rename the entry.`,
      { ...details, fault: fault.fault },
    );
  }
  if (fault.kind === 'folder-as-file') {
    return reject(
      'DOCEX_INPUT_ZIP_NOT_A_FILE',
      `${at} is recorded as a folder but named as a file (no trailing "/"); only files and folders are taken.`,
      { ...details, type: 'folder' },
    );
  }
  if (fault.type === 'symbolic link') {
    return reject(
      'DOCEX_INPUT_ZIP_SYMLINK',
      `${at} is a symbolic link; links in archives are refused.`,
      details,
    );
  }
  return reject(
    'DOCEX_INPUT_ZIP_NOT_A_FILE',
    `${at} is a ${fault.type} by its Unix mode; only files and folders are taken from an archive.`,
    { ...details, type: fault.type },
  );
}

/** yauzl refuses unsafe names while listing; its message says which rule. */
function fromYauzlError(err: Error, fileName: string): InputRejection {
  const m = /^(invalid characters in fileName|absolute path|invalid relative path): (.*)$/s.exec(err.message);
  if (m) {
    return reject(
      'DOCEX_INPUT_ZIP_UNSAFE_PATH',
      `${quoteName(fileName)} has an entry with an unsafe name ${quoteName(m[2] ?? '')} ` +
        '(absolute, climbing out with "..", or with a backslash); such an archive could write outside its folder.',
      { entry: m[2] },
    );
  }
  if (/encrypt/i.test(err.message)) {
    return reject(
      'DOCEX_INPUT_ZIP_ENCRYPTED',
      `${quoteName(fileName)} uses ZIP encryption, which is refused.`,
    );
  }
  return reject('DOCEX_INPUT_ZIP_CORRUPT', `${quoteName(fileName)} is not a readable ZIP: ${err.message}.`);
}

function judgeEntry(entry: yauzl.Entry, fileName: string, limits: ZipLimits): InputRejection | undefined {
  const at = `${quoteName(fileName)} entry ${quoteName(entry.fileName)}`;
  const badName = judgeNameAndType(entry, at);
  if (badName) return badName;
  if (entry.isEncrypted()) {
    return reject('DOCEX_INPUT_ZIP_ENCRYPTED', `${at} is encrypted; send archives without a password.`, {
      entry: entry.fileName,
    });
  }
  if (ARCHIVE_EXTENSIONS.has(path.extname(entry.fileName).toLowerCase())) {
    return reject('DOCEX_INPUT_ZIP_NESTED', `${at} is itself an archive; nested archives are refused.`, {
      entry: entry.fileName,
    });
  }
  const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
  if (entry.uncompressedSize > limits.ratioMinBytes && ratio > limits.maxRatio) {
    return reject(
      'DOCEX_INPUT_ZIP_BOMB',
      `${at} expands ${Math.round(ratio)} times (${mib(entry.uncompressedSize)}); more than ${limits.maxRatio} times is refused as a zip bomb.`,
      { entry: entry.fileName, ratio: Math.round(ratio), uncompressedBytes: entry.uncompressedSize },
    );
  }
  return undefined;
}

async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, maxBytes: number): Promise<Buffer> {
  const stream: Readable = await zip.openReadStreamPromise(entry);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (length >= maxBytes) break;
  }
  stream.destroy();
  return Buffer.concat(chunks);
}

/** First pass: the central directory only. */
async function listEntries(
  filePath: string,
  fileName: string,
  policy: ZipEntryPolicy,
  limits: ZipLimits,
): Promise<ZipDetails | InputRejection> {
  const zip = await zipLib().openPromise(filePath, {
    lazyEntries: true,
    strictFileNames: true,
    autoClose: false,
  });
  const entries: string[] = [];
  const wrong: string[] = [];
  const names = new ArchiveNames();
  let total = 0;
  let compressed = 0;
  let count = 0;
  try {
    for await (const entry of zip.eachEntry()) {
      count += 1;
      if (count > limits.maxEntries) {
        return reject(
          'DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES',
          `${quoteName(fileName)} has more than ${limits.maxEntries} entries.`,
          { maxEntries: limits.maxEntries },
        );
      }
      const bad = judgeEntry(entry, fileName, limits);
      if (bad) return bad;
      const earlier = names.add(entry.fileName);
      if (earlier !== undefined) {
        return reject(
          'DOCEX_INPUT_ZIP_DUPLICATE',
          `${quoteName(fileName)} entry ${quoteName(entry.fileName)} has the name of the earlier entry ${quoteName(earlier)} ` +
            '(names that differ only in case or Unicode normalisation are one file once extracted); which one is meant cannot be told.',
          { entry: entry.fileName, earlier },
        );
      }
      total += entry.uncompressedSize;
      compressed += entry.compressedSize;
      const ratio = total / Math.max(compressed, 1);
      if (total > limits.ratioMinBytes && ratio > limits.maxRatio) {
        return reject(
          'DOCEX_INPUT_ZIP_BOMB',
          `${quoteName(fileName)} expands ${Math.round(ratio)} times over its entries (${mib(total)} so far); ` +
            `more than ${limits.maxRatio} times is refused as a zip bomb, however the entries are cut.`,
          { ratio: Math.round(ratio), uncompressedBytes: total },
        );
      }
      if (total > limits.maxTotalBytes) {
        return reject(
          'DOCEX_INPUT_ZIP_BOMB',
          `${quoteName(fileName)} expands to more than ${mib(limits.maxTotalBytes)}; refused as a zip bomb.`,
          { maxTotalBytes: limits.maxTotalBytes },
        );
      }
      if (entry.fileName.endsWith('/')) continue;
      if (policy.accepts(entry.fileName)) entries.push(entry.fileName);
      else wrong.push(entry.fileName);
    }
  } finally {
    zip.close();
  }
  if (wrong.length > 0) {
    const shown = wrong.slice(0, 5).map(quoteName).join(', ');
    return reject(
      'DOCEX_INPUT_ZIP_ENTRY_TYPE',
      `${quoteName(fileName)} holds entries that are not ${policy.label}: ${shown}` +
        `${wrong.length > 5 ? ` and ${wrong.length - 5} more` : ''}.`,
      { entries: wrong },
    );
  }
  if (entries.length === 0) {
    return reject('DOCEX_INPUT_ZIP_EMPTY', `${quoteName(fileName)} holds no ${policy.label}.`);
  }
  return { entries, totalUncompressedBytes: total };
}

/** Second pass: each accepted entry read (whole, or its head when large) and checked. */
async function checkEntries(
  filePath: string,
  fileName: string,
  policy: ZipEntryPolicy,
  limits: ZipLimits,
): Promise<InputRejection | undefined> {
  const zip = await zipLib().openPromise(filePath, {
    lazyEntries: true,
    strictFileNames: true,
    autoClose: false,
  });
  try {
    for await (const entry of zip.eachEntry()) {
      if (entry.fileName.endsWith('/')) continue;
      const whole = entry.uncompressedSize <= limits.entryCheckMaxBytes;
      const bytes = await readEntry(zip, entry, whole ? Number.POSITIVE_INFINITY : 4096);
      if (detectType(bytes) === 'zip') {
        return reject(
          'DOCEX_INPUT_ZIP_NESTED',
          `${quoteName(fileName)} entry ${quoteName(entry.fileName)} is itself a ZIP archive; nested archives are refused.`,
          { entry: entry.fileName },
        );
      }
      const bad = await policy.check?.(bytes, entry.fileName, whole);
      if (bad) {
        return {
          ...bad,
          reason: `In ${quoteName(fileName)}: ${bad.reason}`,
          details: { ...bad.details, entry: entry.fileName },
        };
      }
    }
  } finally {
    zip.close();
  }
  return undefined;
}

export async function inspectZipFile(
  filePath: string,
  fileName: string,
  policy: ZipEntryPolicy,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
): Promise<{ ok: true; details: ZipDetails } | InputRejection> {
  try {
    const listed = await listEntries(filePath, fileName, policy, limits);
    if ('ok' in listed) return listed;
    const bad = await checkEntries(filePath, fileName, policy, limits);
    return bad ?? { ok: true, details: listed };
  } catch (err) {
    return fromYauzlError(err as Error, fileName);
  }
}
