/**
 * A stopped agent's state folder with its three SQLite stores written through their own APIs, for
 * `docex-agent journal copy`: the journal (mixedJournal, more done files after it), the returns
 * store filled by a real Follower reading the journal's feed (so its cursor is a real history id)
 * and by polls (events with JSON text jsonb would rewrite, documents written, failed and parked, a
 * job given up, a status file written, a daily CSV), and the inbox store (Peppol documents saved,
 * the poll's mark, webhook ids seen). The last done file is not followed yet: the agent stopped
 * before its follower read it.
 */
import path from 'node:path';
import type { ManualClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { JournalLocation } from '../../../src/journal/index.js';
import { SqliteJournal } from '../../../src/journal/sqlite-journal.js';
import type { JournalStore } from '../../../src/journal/store.js';
import { LocalTarget } from '../../../src/outputs/local-target.js';
import { Follower } from '../../../src/returns/follower.js';
import { JournalFeed } from '../../../src/returns/journal-feed.js';
import { openInboxStore, openReturnsStore } from '../../../src/returns/open-stores.js';
import { utcDay } from '../../../src/returns/proof-names.js';
import type { PollRecord, ReturnsStore } from '../../../src/returns/store.js';
import { type MixedJournal, mixedJournal } from '../../journal/support/copy-fixtures.js';
import { claimedFile, toDone } from '../../journal/support/steps.js';
import { scriptedClient, scriptedConfig } from './scripted.js';

/** Event JSON as the service wrote it: spacing, key order, escapes and a number jsonb would rewrite. */
export const ODD_EVENT_JSON =
  '{"status":"COMPLETED",  "id":"se_a1", "note":"d\\u00e9j\\u00e0 vu \u2713", "amount":1.50e3, "z":null}';
export const ODD_JOB_JSON = '{ "id" : "job-1" ,"status":"COMPLETED","n":[1,2 ,3]}';

export interface FilledState {
  journal: MixedJournal;
  /** The jobs the follower took from the journal's feed before the agent stopped. */
  followed: string[];
  /** A done job of the journal the follower had not read yet. */
  unfollowed: string;
  /** The feed's cursor in returns.sqlite at the stop. */
  cursor: string;
  /** Webhook ids the inbox remembers. */
  webhooks: string[];
  /** Peppol documents the inbox saved (the ones still behind the mark). */
  peppol: string[];
  highWaterMark: number;
}

/** A Follower that only reads the feed here (its client is never called by syncFeed). */
export async function followerOn(
  location: JournalLocation,
  store: ReturnsStore,
  stateDir: string,
  clock: ManualClock,
): Promise<{ follower: Follower; feed: JournalFeed }> {
  const feed = await JournalFeed.open(location);
  const follower = new Follower({
    store,
    feed,
    client: scriptedClient(),
    config: scriptedConfig,
    statusTarget: new LocalTarget(path.join(stateDir, 'unused-statuses')),
    proofTarget: new LocalTarget(path.join(stateDir, 'unused-proofs')),
    stateDir,
    clock,
    log: silentLogger(),
    maxSleepMs: 2,
  });
  return { follower, feed };
}

const poll = (jobId: string, fields: Partial<PollRecord>): PollRecord => ({
  jobId,
  status: 'COMPLETED',
  jobJson: ODD_JOB_JSON,
  nextPollAt: 0,
  unchangedPolls: 0,
  done: false,
  changed: true,
  ...fields,
});

/** Fills `<stateDir>/{journal,returns,inbox}.sqlite` and closes them, as a stopped agent leaves them. */
export async function fillState(stateDir: string, clock: ManualClock): Promise<FilledState> {
  const file = path.join(stateDir, 'journal.sqlite');
  const location: JournalLocation = { kind: 'sqlite', file };
  const journal: JournalStore = SqliteJournal.open(file, { clock, log: silentLogger() });
  const m = await mixedJournal(journal, clock);
  // The payload's first row, done: a job whose source is its file.
  await journal.transition(m.rows[0]!, 'done');
  for (const name of ['second.pdf', 'third.pdf']) {
    clock.advance(1000);
    await toDone(journal, (await claimedFile(journal, name)).id);
  }

  const returns = await openReturnsStore(location, stateDir, clock);
  const { follower, feed } = await followerOn(location, returns, stateDir, clock);
  const added = await follower.syncFeed();
  await feed.close();
  const jobs = (await returns.dueJobs(Number.MAX_SAFE_INTEGER, 100)).map((j) => j.jobId).sort();
  if (added !== jobs.length || added < 4) throw new Error(`the follower took ${added} job(s)`);
  const cursor = (await returns.getMeta('journal-history-cursor'))!;

  // Stopped before the follower read the last done file.
  clock.advance(1000);
  const late = await claimedFile(journal, 'late.pdf');
  await toDone(journal, late.id);
  await journal.close();

  // Polls: the first job's events and documents, a second job given up, a third done.
  const [first, second, third] = jobs as [string, string, string];
  const t = clock.now();
  const day = utcDay(t);
  const doc = (sendingEventId: string, ref: string) => ({
    sendingEventId,
    fileReference: ref,
    jobId: first,
    type: 'DELIVERY_PROOF',
    name: `${ref} proof.pdf`,
    contentType: 'application/pdf',
    size: 12_345,
    path: `${day}/first/${sendingEventId}-${ref}.pdf`,
    nextTryAt: t,
  });
  await returns.recordEvents(
    first,
    [
      {
        id: 'se_a1',
        businessStatus: 'DELIVERED',
        status: 'COMPLETED',
        json: ODD_EVENT_JSON,
        finalAt: t,
        finalDay: day,
      },
      { id: 'se_a2', businessStatus: 'PENDING', status: 'IN_PROGRESS', json: '{"id":"se_a2"}' },
    ],
    [doc('se_a1', 'written'), doc('se_a1', 'parked'), doc('se_a1', 'failing'), doc('se_a2', 'pending')],
    t,
    true,
  );
  await returns.recordPoll(poll(first, { nextPollAt: t + 60_000, unchangedPolls: 2 }), t);
  const docs = await returns.documentsOfEvent('se_a1');
  const byRef = (ref: string) => docs.find((d) => d.fileReference === ref)!;
  await returns.markDocumentWriting(byRef('written'));
  await returns.markDocumentDone(byRef('written'), 'md5-of-written', t + 1);
  await returns.markDocumentFailed(byRef('failing'), 'HTTP 503 from the files host', t + 30_000);
  await returns.markDocumentParked(byRef('parked'), 'HTTP 404, 8 times');
  await returns.recordPoll(poll(second, { done: true, gaveUp: 'followed longer than maxFollowMs' }), t);
  await returns.recordPoll(poll(third, { done: true, unchangedPolls: 5 }), t);
  for (const source of await returns.staleSources(1))
    await returns.writeStatusAlone(source.itemId, async () => true);
  await returns.recordCsv('2026-11-20', 3, t);
  await returns.close();

  const inbox = await openInboxStore(location, stateDir, clock);
  const peppol = ['peppol-b', 'peppol-a', 'peppol-c'];
  for (const [i, id] of peppol.entries()) {
    await inbox.markSaved({ id, createdAt: t - 10_000 + i, stem: `2026-11-21-${id}` });
  }
  await inbox.advanceHighWaterMark(t - 5_000, 3_600_000);
  const webhooks = ['wh-2', 'wh-1', ' wh-leading-space'];
  for (const id of webhooks)
    await inbox.rememberWebhook(id, id === 'wh-1' ? undefined : 'job.updated', 86_400_000);
  await inbox.close();

  return {
    journal: m,
    followed: jobs,
    unfollowed: `job-${late.id}`,
    cursor,
    webhooks,
    peppol,
    highWaterMark: t - 5_000,
  };
}
