/**
 * Inspection verdicts by content: a file's check is computed once and reused when the same bytes
 * come again soon (a re-drop, a copy under another name, a crafted file sent over and over), so
 * a file built to be slow costs the worker its time limit once, not at every drop.
 *
 * A verdict is reused only where it would come out the same: the key holds the content (sha256),
 * everything of the name the check looks at (its extension, what is wrong with it if anything), what the
 * path is (a regular file, more than one link) and every setting the check reads (the workflow's
 * input source, the size limit, allowHardLinks, the inspector's memory, time and expansion
 * limits). A verdict from other settings is never found. The reason names the file it was
 * computed for; a reused one names the file asked about.
 */
import path from 'node:path';
import { nameFault } from '../domain/file-names.js';
import { MAYBE_TRANSIENT_INPUT_CODES, quoteName } from './inspect/codes.js';
import type { Inspection } from './inspect/inspect-file.js';

/** Verdicts kept at most: a burst of this many distinct files in a row pushes the oldest out. */
export const VERDICT_CACHE_ENTRIES = 4096;
/** Their reasons and details together (as JSON) at most: a ZIP's list of entries can be long. */
export const VERDICT_CACHE_BYTES = 8 * 1024 * 1024;

/** What a verdict depends on besides the bytes (see the module comment). */
export interface VerdictInputs {
  sha256: string;
  fileName: string;
  inputSourceType: string;
  maxBytes: number;
  allowHardLinks: boolean;
  /** The path as lstat saw it: a regular file (not a link), and whether it has more than one link. */
  regularFile: boolean;
  manyLinks: boolean;
  /** The inspector's limits (inspection.memory, timeLimit, limits), as one string. */
  limits: string;
}

interface Entry {
  fileName: string;
  verdict: Inspection;
  bytes: number;
}

function keyOf(inputs: VerdictInputs): string {
  const { fileName, ...rest } = inputs;
  return JSON.stringify({
    ...rest,
    extension: path.extname(fileName).toLowerCase(),
    nameFault: nameFault(fileName) ?? null,
  });
}

/** The verdict computed for `from`, told of `to`. */
function readdressed(verdict: Inspection, from: string, to: string): Inspection {
  if (verdict.ok || from === to) return verdict;
  return { ...verdict, reason: verdict.reason.replaceAll(quoteName(from), quoteName(to)) };
}

/** A bounded map of verdicts, least recently used out first. */
export class VerdictCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly maxEntries = VERDICT_CACHE_ENTRIES,
    private readonly maxBytes = VERDICT_CACHE_BYTES,
  ) {}

  get(inputs: VerdictInputs): Inspection | undefined {
    const key = keyOf(inputs);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return readdressed(entry.verdict, entry.fileName, inputs.fileName);
  }

  /**
   * Keeps `verdict` unless it may not hold for the same bytes a moment later: a file still being
   * written or chmod-ed (MAYBE_TRANSIENT_INPUT_CODES), or a read that failed.
   */
  set(inputs: VerdictInputs, verdict: Inspection): void {
    if (!verdict.ok && MAYBE_TRANSIENT_INPUT_CODES.has(verdict.code)) return;
    const bytes = JSON.stringify(verdict).length;
    if (bytes > this.maxBytes) return;
    const key = keyOf(inputs);
    this.drop(key);
    this.entries.set(key, { fileName: inputs.fileName, verdict, bytes });
    this.bytes += bytes;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.drop(oldest);
    }
  }

  /** Verdicts kept. */
  get size(): number {
    return this.entries.size;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}
