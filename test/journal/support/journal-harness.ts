import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../src/core/clock.js';
import { createLogger, type Logger } from '../../../src/core/logger.js';
import { Journal } from '../../../src/journal/journal.js';
import type { ClaimInput } from '../../../src/journal/types.js';

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A pre-signed URL shaped like the files host's, with a signature worth hiding. */
export const UPLOAD_URL =
  'https://127.0.0.1:8443/upload/job-1?X-Sig=SIGNATURE-9f8e7d6c5b4a&expires=1763722800';

export interface JournalHarness {
  dir: string;
  file: string;
  clock: ManualClock;
  log: Logger;
  /** Every log line written so far, as text. */
  logText(): string;
  open(): Journal;
  cleanup(): void;
}

export function journalHarness(): JournalHarness {
  const dir = mkdtempSync(join(tmpdir(), 'docex-journal-'));
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (s: string) => lines.push(s) } });
  const clock = new ManualClock();
  const opened: Journal[] = [];
  const file = join(dir, 'state', 'journal.db');
  return {
    dir,
    file,
    clock,
    log,
    logText: () => lines.join(''),
    open() {
      const journal = Journal.open(file, { clock, log });
      opened.push(journal);
      return journal;
    },
    cleanup() {
      for (const j of opened) j.close();
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
