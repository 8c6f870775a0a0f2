/**
 * SQLite journals to copy (`docex-agent journal copy`): a small one with an item in every state
 * the copy must carry over, walked through SqliteJournal's API; and a large one of done files,
 * written with raw inserts so 100,000 files take seconds to build.
 */
import type { ManualClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { Database } from '../../../src/core/sqlite.js';
import { SqliteJournal } from '../../../src/journal/sqlite-journal.js';
import type { JournalStore } from '../../../src/journal/store.js';
import { sha256, UPLOAD_URL } from './journal-harness.js';
import { claimedFile, toDone } from './steps.js';

/** The items of mixedJournal, by what they show. */
export interface MixedJournal {
  /** A done file: its content is a duplicate from now on. */
  done: number;
  /** A second drop of done's content, refused as a duplicate. */
  duplicate: number;
  /** A file refused with a code and a reason. */
  rejected: number;
  /** A created job whose upload is not confirmed: its upload URL must travel. */
  created: number;
  /** A file waiting for its create, after a failed try (retry state). */
  creating: number;
  /** A payload file (validated) and its rows: one created, one validated, one rejected. */
  payload: number;
  rows: number[];
  /** A path whose inspection a crash interrupted. */
  inspectedPath: string;
  /** The highest item id the journal gave: a pruned refused file's, not in the table any more. */
  prunedId: number;
  /** The done file's content. */
  doneSha256: string;
}

/** Every kind of item the copy must carry, on any JournalStore (the test's clock moves between steps). */
export async function mixedJournal(journal: JournalStore, clock: ManualClock): Promise<MixedJournal> {
  const done = await claimedFile(journal, 'done.pdf');
  await toDone(journal, done.id);
  clock.advance(1000);
  const again = await journal.recordClaim({
    folder: 'invoices',
    sourcePath: '/srv/erp/in/done-again.pdf',
    claimedPath: '/srv/erp/in/.processing/done-again.pdf',
    fileName: 'done-again.pdf',
    size: 1234,
    mtimeMs: 1_763_700_000_123.5,
    sha256: sha256('done.pdf'),
    workflowId: 'wf-pdf-email',
    mode: 'single-file',
  });
  if (again.kind !== 'duplicate') throw new Error(`expected a duplicate, got ${again.kind}`);
  clock.advance(1000);
  const rejected = await claimedFile(journal, 'bad.pdf');
  await journal.transition(rejected.id, 'rejected', {
    code: 'DOCEX_INPUT_TYPE_MISMATCH',
    reason: 'plain text',
  });

  clock.advance(1000);
  const created = await claimedFile(journal, 'created.pdf', { allowDuplicates: true });
  await journal.transition(created.id, 'validated', { note: 'checked' });
  await journal.transition(created.id, 'creating');
  await journal.transition(created.id, 'created', {
    jobId: 'job-created',
    uploadUrl: UPLOAD_URL,
    uploadDeadline: clock.now() + 2 * 3_600_000,
    lostAnswer: 'kept',
    note: 'job found by name',
  });

  clock.advance(1000);
  const creating = await claimedFile(journal, 'creating.pdf');
  await journal.transition(creating.id, 'validated');
  await journal.transition(creating.id, 'creating');
  await journal.recordFailedTry(creating.id, { code: 'DOCEX_NETWORK', nextTryAt: clock.now() + 60_000 });

  clock.advance(1000);
  const payload = await claimedFile(journal, 'batch.csv', { mode: 'payload-word' });
  await journal.transition(payload.id, 'validated');
  const rows = await journal.addRows(payload.id, [
    { rowIndex: 0, label: 'C-1', payloadSha256: sha256('row-0') },
    { rowIndex: 1, label: 'C-2' },
    { rowIndex: 2, rejected: { code: 'DOCEX_PAYLOAD_ROW_INVALID', reason: 'no recipient' } },
  ]);
  await journal.transition(rows[0]!.id, 'creating');
  await journal.transition(rows[0]!.id, 'created', { jobId: 'job-row-0' });

  const inspectedPath = '/srv/erp/in/.processing/crashed.pdf';
  await journal.inspectionStarting(inspectedPath);

  // A refused file, pruned whole: the highest id the journal gave is no longer in its table.
  clock.advance(1000);
  const pruned = await claimedFile(journal, 'pruned.pdf');
  await journal.transition(pruned.id, 'rejected', { code: 'DOCEX_REJECTED' });
  clock.advance(1000);
  await journal.pruneFinished(clock.now(), pruned.id - 1, 1);
  if ((await journal.get(pruned.id)) !== undefined) throw new Error('the pruned file is still there');

  return {
    done: done.id,
    duplicate: again.item.id,
    rejected: rejected.id,
    created: created.id,
    creating: creating.id,
    payload: payload.id,
    rows: rows.map((r) => r.id),
    inspectedPath,
    prunedId: pruned.id,
    doneSha256: sha256('done.pdf'),
  };
}

export interface DoneJournalOptions {
  /** Done files (default 100,000). */
  files?: number;
  /** Epoch ms of the first claim. */
  start?: number;
}

/**
 * A journal of `files` done files, 3 history entries each (claimed, created, done), as an agent
 * would have left them: the schema by SqliteJournal.open, the rows by raw inserts in one
 * transaction (100,000 files: about a second).
 */
export async function doneJournal(file: string, options: DoneJournalOptions = {}): Promise<void> {
  const files = options.files ?? 100_000;
  const start = options.start ?? Date.parse('2026-01-01T00:00:00.000Z');
  const journal = SqliteJournal.open(file, { clock: { now: () => start }, log: silentLogger() });
  await journal.close();
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const item = db.prepare(
      `INSERT INTO items (id, kind, folder, workflow_id, mode, file_name, source_path, claimed_path, size,
         mtime_ms, sha256, state, attempt, job_name, job_id, uploaded_md5, created_at, updated_at)
       VALUES (?, 'file', ?, 'wf-pdf-email', 'single-file', ?, ?, ?, ?, ?, ?, 'done', 1, ?, ?, ?, ?, ?)`,
    );
    const history = db.prepare(
      'INSERT INTO history (item_id, from_state, to_state, at, detail) VALUES (?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (let id = 1; id <= files; id++) {
        const at = start + id * 1000;
        const name = `invoice-${String(id).padStart(7, '0')}.pdf`;
        const folder = `folder-${id % 8}`;
        const content = sha256(name);
        item.run(
          id,
          folder,
          name,
          `/srv/erp/in/${folder}/${name}`,
          `/srv/erp/in/${folder}/.processing/${name}`,
          20_000 + (id % 5000),
          at - 5000,
          content,
          `docex-${folder}-${name}-1`,
          `job-${id}`,
          'md5md5md5md5md5md5md5md5md5md5md',
          at,
          at + 2000,
        );
        history.run(id, null, 'claimed', at, JSON.stringify({ size: 20_000 + (id % 5000), sha256: content }));
        history.run(id, 'creating', 'created', at + 1000, JSON.stringify({ jobId: `job-${id}` }));
        history.run(id, 'uploaded', 'done', at + 2000, null);
      }
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
