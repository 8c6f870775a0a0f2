/**
 * Inspection verdicts by content: a file's check is computed once and reused when the same bytes
 * come again soon (a re-drop, a copy under another name, a crafted file sent over and over), so
 * a file built to be slow costs the worker its time limit once, not at every drop.
 *
 * A verdict is reused only where it would come out the same: the key holds the content (sha256),
 * everything of the name the check looks at (its extension, what is wrong with it if anything), what the
 * path is (a regular file, its hard links) and every setting the check reads (the workflow's
 * input source, the size limit, allowHardLinks, the inspector's memory, time and expansion
 * limits). A verdict from other settings is never found. The reason names the file it was
 * computed for; a reused one names the file asked about.
 */
import path from 'node:path';
import { type Clock, systemClock } from '../core/clock.js';
import { nameFault } from '../domain/file-names.js';
import { MAYBE_TRANSIENT_INPUT_CODES, quoteName } from './inspect/codes.js';
import type { Inspection } from './inspect/inspect-file.js';

/** Verdicts kept at most: a burst of this many distinct files in a row pushes the oldest out. */
export const VERDICT_CACHE_ENTRIES = 4096;
/**
 * Their reasons and details together (as JSON, in UTF-16 code units) at most: a ZIP's list of
 * entries can be long.
 */
export const VERDICT_CACHE_LENGTH = 8 * 1024 * 1024;
/** How long a verdict is reused: a drop again "soon", not a rejection for ever. */
export const VERDICT_MAX_AGE_MS = 10 * 60_000;

/** Worker limits whose hit depends on the worker's state, not only on the bytes. */
const STATEFUL_LIMITS: ReadonlySet<unknown> = new Set(['crash', 'memory']);

/** What a verdict depends on besides the bytes (see the module comment). */
export interface VerdictInputs {
  sha256: string;
  fileName: string;
  inputSourceType: string;
  maxBytes: number;
  allowHardLinks: boolean;
  /** The path as lstat saw it: a regular file (not a link), and its number of hard links (a reason names it). */
  regularFile: boolean;
  links: number;
  /** The inspector's limits (inspection.memory, timeLimit, limits), as one string. */
  limits: string;
}

interface Entry {
  fileName: string;
  verdict: Inspection;
  /** Its JSON's length. */
  length: number;
  /** When it was kept (clock ms). */
  at: number;
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
  private totalLength = 0;
  private readonly clock: Clock;
  private readonly maxEntries: number;
  private readonly maxLength: number;
  private readonly maxAgeMs: number;

  constructor(options: { clock?: Clock; maxEntries?: number; maxLength?: number; maxAgeMs?: number } = {}) {
    this.clock = options.clock ?? systemClock;
    this.maxEntries = options.maxEntries ?? VERDICT_CACHE_ENTRIES;
    this.maxLength = options.maxLength ?? VERDICT_CACHE_LENGTH;
    this.maxAgeMs = options.maxAgeMs ?? VERDICT_MAX_AGE_MS;
  }

  get(inputs: VerdictInputs): Inspection | undefined {
    const key = keyOf(inputs);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.clock.now() - entry.at > this.maxAgeMs) {
      this.drop(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return readdressed(entry.verdict, entry.fileName, inputs.fileName);
  }

  /**
   * Keeps `verdict` unless it may not hold for the same bytes a moment later: a file still being
   * written or chmod-ed (MAYBE_TRANSIENT_INPUT_CODES), a read that failed, or a worker that died
   * or ran out of memory (which may be another task's leftovers).
   */
  set(inputs: VerdictInputs, verdict: Inspection): void {
    if (!verdict.ok && MAYBE_TRANSIENT_INPUT_CODES.has(verdict.code)) return;
    if (!verdict.ok && STATEFUL_LIMITS.has(verdict.details?.['limit'])) return;
    const length = JSON.stringify(verdict).length;
    if (length > this.maxLength) return;
    const key = keyOf(inputs);
    this.drop(key);
    this.entries.set(key, { fileName: inputs.fileName, verdict, length, at: this.clock.now() });
    this.totalLength += length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.totalLength <= this.maxLength) break;
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
    this.totalLength -= entry.length;
  }
}
