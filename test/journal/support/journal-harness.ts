/**
 * A SQLite journal in a temp folder, for the SQLite-only tests (WAL scrub, file modes, migrations,
 * crash child) and for the `sqlite` entry of the backend registry (backends.ts). Stores and readers
 * are opened through openJournal/openJournalReader, as the agent opens them.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../src/core/clock.js';
import { createLogger, type Logger } from '../../../src/core/logger.js';
import type { JournalLocation } from '../../../src/journal/location.js';
import { openJournal, openJournalReader } from '../../../src/journal/open.js';
import type { JournalReader, JournalStore } from '../../../src/journal/store.js';
import type { ClaimInput } from '../../../src/journal/types.js';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A pre-signed URL shaped like the files host's, with a signature worth hiding. */
export const UPLOAD_URL =
  'https://127.0.0.1:8443/upload/job-1?X-Sig=SIGNATURE-9f8e7d6c5b4a&expires=1763722800';
/** The part of UPLOAD_URL that must never show outside the uploader. */
export const UPLOAD_URL_SIGNATURE = 'SIGNATURE-9f8e7d6c5b4a';

/** A logger at debug level that keeps every line, so tests can look for what must not be logged. */
export function capturingLogger(): { log: Logger; logText(): string } {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => lines.push(s) } });
  return { log, logText: () => lines.join('') };
}

export interface JournalHarnessOptions {
  clock?: ManualClock;
  /** JournalOptions.scrubDelayMs (default: the journal's own). */
  scrubDelayMs?: number;
}

export interface JournalHarness {
  dir: string;
  /** The journal's SQLite file (it and its -wal/-shm are the journal on disk). */
  file: string;
  location: JournalLocation;
  clock: ManualClock;
  log: Logger;
  /** Every log line written so far, as text. */
  logText(): string;
  /** A new store on the file (the file and folder are made on the first). Closed by cleanup(). */
  open(): Promise<JournalStore>;
  /** A read-only reader on the file (it must exist). Closed by cleanup(). */
  reader(): Promise<JournalReader>;
  /** Closes every store and reader opened here, then removes the temp folder. */
  cleanup(): Promise<void>;
}

export function journalHarness(options: JournalHarnessOptions = {}): JournalHarness {
  const dir = mkdtempSync(join(tmpdir(), 'docex-journal-'));
  const { log, logText } = capturingLogger();
  const clock = options.clock ?? new ManualClock();
  const opened: { close(): Promise<void> }[] = [];
  const file = join(dir, 'state', 'journal.db');
  const location: JournalLocation = { kind: 'sqlite', file };
  return {
    dir,
    file,
    location,
    clock,
    log,
    logText,
    async open() {
      const journal = await openJournal(location, {
        clock,
        log,
        ...(options.scrubDelayMs === undefined ? {} : { scrubDelayMs: options.scrubDelayMs }),
      });
      opened.push(journal);
      return journal;
    },
    async reader() {
      const reader = await openJournalReader(location, { busyTimeoutMs: 1000 });
      opened.push(reader);
      return reader;
    },
    async cleanup() {
      // Closing twice is harmless (a test may close a store itself); closing must not keep the folder.
      for (const j of opened.splice(0)) await j.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function claimInput(overrides: Partial<ClaimInput> = {}): ClaimInput {
  const fileName = overrides.fileName ?? 'invoice-2026-0001.pdf';
  return {
    folder: 'invoices',
    sourcePath: `/srv/erp/in/${fileName}`,
    claimedPath: `/srv/erp/in/.processing/${fileName}`,
    fileName,
    size: 1234,
    mtimeMs: 1_763_700_000_000,
    sha256: sha256(fileName),
    workflowId: 'wf-pdf-email',
    mode: 'single-file',
    ...overrides,
  };
}
