/**
 * The return path's stores, one contract over both backends: the same tests run on SQLite files in
 * a temp state folder and on a fresh PostgreSQL database (test/support/postgres.ts), every store
 * opened through open-stores.ts with a JournalLocation as the agent opens it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { Database } from '../../src/core/sqlite.js';
import type { JournalLocation } from '../../src/journal/index.js';
import {
  openExistingReturnsStore,
  openInboxStore,
  openReturnsReader,
  openReturnsStore,
} from '../../src/returns/open-stores.js';
import { statusFilePath } from '../../src/returns/proof-names.js';
import { dailyCsvText, renderCsv } from '../../src/returns/status-csv.js';
import { statusFileText } from '../../src/returns/status-files.js';
import {
  type JobRow,
  type NewDocument,
  type NewJob,
  POLL_UNFINISHED_KEY,
  type PolledEvent,
  type PollRecord,
  type ReturnsStore,
  type SourceRow,
} from '../../src/returns/store.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { recordPolled } from './support/record-poll.js';
import { buildStatusDocument } from './support/status-document.js';

interface Place {
  location: JournalLocation;
  stateDir: string;
  /** Runs SQL on the backend directly (a newer agent's migration record). */
  exec(sql: string): Promise<void>;
  /** The tables that exist. */
  tables(): Promise<string[]>;
  /**
   * A document claim's clock moves on by `ms` (DocumentClaim): nothing for a store that reckons
   * claims by the writer's clock (the test moves that); for one that reckons them by the
   * database's, the ends of the claims held come that much closer.
   */
  claimTimePasses(ms: number): Promise<void>;
}

const T0 = 1_700_000_000_000;
const DAY = '2023-11-14';

const newJob = (jobId: string, itemId: number, fileName: string, extra: Partial<NewJob> = {}): NewJob => ({
  jobId,
  source: { itemId, folder: 'pdf', fileName, sha256: 'ab', claimedAt: T0, day: DAY },
  statusPath: (collision) => statusFilePath(DAY, fileName, itemId, collision),
  itemId,
  rowIndex: undefined,
  label: undefined,
  jobName: undefined,
  recordedAt: T0,
  firstPollAt: T0 + 10,
  ...extra,
});

/** A poll with the events and documents of its one page. */
type Polled = PollRecord & { events?: PolledEvent[]; documents?: NewDocument[] };

const poll = (jobId: string, fields: Partial<Polled> = {}): Polled => ({
  jobId,
  status: 'COMPLETED',
  jobJson: '{}',
  nextPollAt: T0 + 1e9,
  unchangedPolls: 0,
  done: false,
  changed: true,
  ...fields,
});

const event = (id: string, finalAt?: number): PolledEvent => ({
  id,
  businessStatus: 'DELIVERED',
  status: 'COMPLETED',
  json: JSON.stringify({ id, businessStatus: 'DELIVERED', status: 'COMPLETED', documents: [] }),
  ...(finalAt === undefined ? {} : { finalAt, finalDay: DAY }),
});

const doc = (sendingEventId: string, ref: string, jobId = 'job_1'): NewDocument => ({
  sendingEventId,
  fileReference: ref,
  jobId,
  type: 'DELIVERY_PROOF',
  name: `${ref}.pdf`,
  contentType: 'application/pdf',
  size: 10,
  path: `${DAY}/a/${sendingEventId}-${ref}.pdf`,
  nextTryAt: T0,
});

async function collect(pieces: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
}

function conformance(open: () => Promise<Place>): void {
  let place: Place;
  let clock: ManualClock;
  const toClose: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(store: T): T => {
    toClose.push(store);
    return store;
  };
  const returns = async () => track(await openReturnsStore(place.location, place.stateDir, clock));
  const inbox = async () => track(await openInboxStore(place.location, place.stateDir, clock));

  beforeEach(async () => {
    clock = new ManualClock(T0);
    place = await open();
  });
  afterEach(async () => {
    for (const store of toClose.splice(0)) await store.close();
  });

  describe('returns store', () => {
    it('takes the same jobs from several followers at once (several agents on one journal): each once, no conflict', async () => {
      const followers = [await returns(), await returns(), await returns()];
      const all: string[] = [];
      // Rounds of the same batch from every follower at once: the inserts of one source race.
      for (let round = 0; round < 8; round++) {
        const jobs = Array.from({ length: 20 }, (_, n) =>
          newJob(`job_${round}_${n}`, round * 100 + n + 1, `f${round}_${n}.pdf`),
        );
        all.push(...jobs.map((j) => j.jobId));
        const added = await Promise.all(followers.map((f) => f.addJobs(jobs, 'cursor', String(round), T0)));
        expect(added.reduce((a, b) => a + b, 0)).toBe(20);
      }
      expect((await followers[0]!.dueJobs(T0 + 10, 1000)).map((j) => j.jobId).sort()).toEqual(all.sort());
    });

    it('names apart two files of one name recorded by two followers at once', async () => {
      const [one, two] = [await returns(), await returns()];
      await Promise.all([
        one.addJobs([newJob('job_a', 1, 'same.pdf')], 'cursor', '1', T0),
        two.addJobs([newJob('job_b', 2, 'same.pdf')], 'cursor', '2', T0),
      ]);
      const paths = [(await one.source(1))?.statusPath, (await one.source(2))?.statusPath];
      // Whichever came first keeps the plain name; the other is numbered by its item.
      const plain = `${DAY}/same.pdf.status.json`;
      expect(paths.filter((p) => p === plain)).toHaveLength(1);
      const other = paths.findIndex((p) => p !== plain);
      expect(paths[other]).toBe(`${DAY}/same.pdf.${other + 1}.status.json`);
    });

    it('records jobs once, with the feed cursor in the same transaction, and names colliding status files apart', async () => {
      const store = await returns();
      expect(
        await store.addJobs([newJob('job_1', 1, 'a.pdf'), newJob('job_2', 2, 'a.pdf')], 'cursor', '7', T0),
      ).toBe(2);
      expect(await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '8', T0)).toBe(0);
      expect(await store.getMeta('cursor')).toBe('8');
      expect(await store.getMeta('nothing')).toBeUndefined();
      expect((await store.source(1))?.statusPath).toBe(`${DAY}/a.pdf.status.json`);
      expect((await store.source(2))?.statusPath).toBe(`${DAY}/a.pdf.2.status.json`);
      const source = (await store.source(1))!;
      // BIGINT columns come back as numbers.
      expect(source.claimedAt).toBe(T0);
      expect(typeof source.version).toBe('number');
      expect(await store.dueJobs(T0 + 9, 10)).toEqual([]);
      expect((await store.dueJobs(T0 + 10, 10)).map((j) => j.jobId)).toEqual(['job_1', 'job_2']);
      expect(await store.openJobs()).toBe(2);
      expect(await store.counts()).toEqual({
        jobs: 2,
        open: 2,
        events: 0,
        documents: 0,
        documentsDone: 0,
        documentsParked: 0,
      });
    });

    it('records a batch of jobs whole or not at all', async () => {
      const store = await returns();
      const broken = newJob('job_2', 2, 'b.pdf', {
        statusPath: () => {
          throw new Error('no name');
        },
      });
      await expect(store.addJobs([newJob('job_1', 1, 'a.pdf'), broken], 'cursor', '9', T0)).rejects.toThrow();
      expect(await store.job('job_1')).toBeUndefined();
      expect(await store.source(1)).toBeUndefined();
      expect(await store.getMeta('cursor')).toBeUndefined();
    });

    it('records polls: events upserted with their first final time, documents once, the file version moved', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf', { rowIndex: 2 })], 'cursor', '1', T0);
      const v0 = (await store.source(1))!.version;
      await store.recordEvents('job_1', [event('se_1', T0 + 5)], [doc('se_1', 'p')], T0 + 5, true);
      expect((await store.source(1))!.version).toBe(v0 + 1);
      // Seen final again later: the first final time stays; the document already recorded stays.
      await store.recordEvents(
        'job_1',
        [{ ...event('se_1', T0 + 99), status: 'LATE' }],
        [{ ...doc('se_1', 'p'), path: 'elsewhere.pdf' }],
        T0 + 99,
        false,
      );
      expect((await store.source(1))!.version).toBe(v0 + 1);
      expect(await store.event('se_1')).toMatchObject({ status: 'LATE', finalAt: T0 + 5, finalDay: DAY });
      expect((await store.documentsOfEvent('se_1')).map((d) => [d.path, d.state])).toEqual([
        [`${DAY}/a/se_1-p.pdf`, 'pending'],
      ]);
      expect([...(await store.eventsById(['se_1', 'se_unknown'])).keys()]).toEqual(['se_1']);
      expect(await store.eventsById([])).toEqual(new Map());
      // An unknown job records nothing.
      await store.recordEvents('job_unknown', [event('se_9')], [], T0, true);
      expect(await store.event('se_9')).toBeUndefined();

      await store.recordPoll(poll('job_1', { done: true, unchangedPolls: 4, changed: false }), T0 + 100);
      const job = (await store.job('job_1'))!;
      expect(job).toMatchObject({
        done: true,
        polls: 1,
        unchangedPolls: 4,
        rowIndex: 2,
        status: 'COMPLETED',
      });
      // done changed: the file's status version moves although nothing else did.
      expect((await store.source(1))!.version).toBe(v0 + 2);
      await store.recordPoll(poll('job_unknown'), T0);
      expect(await store.job('job_unknown')).toBeUndefined();
    });

    it('moves the file version on a poll only when it changes what the file shows: events, done, gave up', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      const version = async () => (await store.source(1))!.version;
      const v0 = await version();
      await store.recordPoll(poll('job_1', { changed: false }), T0 + 1);
      expect(await version()).toBe(v0);
      await store.recordPoll(poll('job_1', { changed: true }), T0 + 2);
      expect(await version()).toBe(v0 + 1);
      await store.recordPoll(
        poll('job_1', { changed: false, gaveUp: 'followed longer than maxFollowMs' }),
        T0 + 3,
      );
      expect(await version()).toBe(v0 + 2);
      await store.recordPoll(
        poll('job_1', { changed: false, gaveUp: 'followed longer than maxFollowMs' }),
        T0 + 4,
      );
      expect(await version()).toBe(v0 + 2);
      expect((await store.job('job_1'))!).toMatchObject({
        polls: 4,
        gaveUp: 'followed longer than maxFollowMs',
      });
    });

    it('records a page naming one event or document twice: the last event with the first final time, the first document', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      await store.recordEvents(
        'job_1',
        [
          { ...event('se_1'), status: 'FIRST' },
          { ...event('se_1', T0 + 5), status: 'FINAL' },
          { ...event('se_1'), status: 'LAST' },
        ],
        [doc('se_1', 'p'), { ...doc('se_1', 'p'), path: 'second.pdf' }],
        T0,
        true,
      );
      // The last copy's fields, and the final time the first final copy gave.
      expect(await store.event('se_1')).toMatchObject({ status: 'LAST', finalAt: T0 + 5, finalDay: DAY });
      expect((await store.documentsOfEvent('se_1')).map((d) => d.path)).toEqual([`${DAY}/a/se_1-p.pdf`]);
    });

    it('polls soon, defers, and reopens a job after a re-send with its follow window started again', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      await store.recordPoll(poll('job_1', { nextPollAt: T0 + 500, done: true }), T0);
      expect(await store.pollSoon('job_1', T0 + 900)).toBe(true);
      expect((await store.job('job_1'))!.nextPollAt).toBe(T0 + 500);
      expect(await store.pollSoon('job_1', T0 + 100)).toBe(true);
      expect((await store.job('job_1'))!.nextPollAt).toBe(T0 + 100);
      expect(await store.pollSoon('job_unknown', T0)).toBe(false);
      await store.deferJob('job_1', T0 + 700);
      expect(await store.job('job_1')).toMatchObject({ nextPollAt: T0 + 700, unchangedPolls: 1, done: true });
      const later = T0 + 40 * 86_400_000;
      expect(await store.reopenJob('job_1', later)).toBe(true);
      expect(await store.job('job_1')).toMatchObject({ done: false, recordedAt: later, unchangedPolls: 0 });
      expect((await store.dueJobs(later, 10)).map((j) => j.jobId)).toEqual(['job_1']);
      expect(await store.reopenJob('job_unknown', later)).toBe(false);
    });

    it('polls every unfinished job within a spread, in due order, never later than it was due', async () => {
      const store = await returns();
      const ids = ['job_a', 'job_b', 'job_c', 'job_d', 'job_e', 'job_f'];
      await store.addJobs(
        ids.map((id, i) => newJob(id, i + 1, `${id}.pdf`)),
        'cursor',
        '6',
        T0,
      );
      const saved: Record<string, number> = {
        // Saved 30 minutes out, as a poll while webhooks arrive leaves them (job_b the soonest).
        job_a: T0 + 1_800_002,
        job_b: T0 + 1_800_000,
        job_c: T0 + 1_800_001,
        // Due sooner than its place in the spread: it keeps its own time.
        job_d: T0 + 10,
        job_e: T0 + 1_800_003,
        // Done: not polled again.
        job_f: T0 + 1_800_000,
      };
      for (const id of ids) {
        await store.recordPoll(poll(id, { nextPollAt: saved[id]!, done: id === 'job_f' }), T0);
      }
      await store.requestPollOfUnfinished(T0);
      expect(await store.getMeta(POLL_UNFINISHED_KEY)).toBe(String(T0));

      const now = T0 + 1000;
      expect(await store.pollUnfinishedWithin(now, 60_000)).toBe(4);
      const next = async (id: string) => (await store.job(id))!.nextPollAt;
      // Five unfinished jobs in due order d, b, c, a, e: the i-th at now + i * 12 s.
      expect(await next('job_d')).toBe(T0 + 10);
      expect(await next('job_b')).toBe(now + 12_000);
      expect(await next('job_c')).toBe(now + 24_000);
      expect(await next('job_a')).toBe(now + 36_000);
      expect(await next('job_e')).toBe(now + 48_000);
      expect(await next('job_f')).toBe(T0 + 1_800_000);
      expect(await store.getMeta(POLL_UNFINISHED_KEY)).toBeUndefined();
      expect((await store.dueJobs(now + 24_000, 10)).map((j) => j.jobId)).toEqual([
        'job_d',
        'job_b',
        'job_c',
      ]);
      // Again at once: nothing is later than its place any more, nothing moves.
      expect(await store.pollUnfinishedWithin(now, 60_000)).toBe(0);
      expect(await next('job_e')).toBe(now + 48_000);
    });

    it('takes documents through writing, done, failed, parked and `returns retry`', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      const refs = ['failed', 'parked', 'saved', 'untried'];
      await recordPolled(
        store,
        poll('job_1', {
          events: [event('se_1', T0)],
          documents: refs.map((r) => doc('se_1', r)),
          done: true,
        }),
        T0,
      );
      expect(await store.allDocumentsDone(1)).toBe(false);
      const due = await store.dueDocuments(T0, 10);
      expect(due.map((d) => d.fileReference).sort()).toEqual(refs);
      const [failed, parked, saved] = [...due].sort((a, b) => a.fileReference.localeCompare(b.fileReference));
      expect(await store.pathUsedByOther(saved!.path, 'se_1', 'saved')).toBe(false);
      expect(await store.pathUsedByOther(saved!.path, 'se_1', 'other')).toBe(true);
      expect(
        await store.pathsUsedByOthers([
          { path: saved!.path, sendingEventId: 'se_1', fileReference: 'saved' },
          { path: saved!.path, sendingEventId: 'se_1', fileReference: 'other' },
          { path: 'free.pdf', sendingEventId: 'se_1', fileReference: 'other' },
          { path: saved!.path, sendingEventId: 'se_2', fileReference: 'saved' },
        ]),
      ).toEqual([false, true, false, true]);
      expect(await store.pathsUsedByOthers([])).toEqual([]);
      const v0 = (await store.source(1))!.version;
      await store.markDocumentWriting(saved!);
      expect((await store.documentsOfEvent('se_1')).find((d) => d.fileReference === 'saved')!.state).toBe(
        'writing',
      );
      await store.markDocumentDone(saved!, 'md5', T0 + 1);
      expect((await store.source(1))!.version).toBe(v0 + 1);
      // A document done is not taken back to writing.
      await store.markDocumentWriting(saved!);
      expect((await store.documentsOfEvent('se_1')).find((d) => d.fileReference === 'saved')!.state).toBe(
        'done',
      );
      await store.markDocumentFailed(failed!, 'DOCEX_NETWORK: no answer', T0 + 500_000);
      await store.markDocumentParked(parked!, 'DOCEX_RESPONSE_INVALID: 3 tries');
      expect((await store.dueDocuments(T0 + 1e9, 10)).map((d) => d.fileReference).sort()).toEqual([
        'failed',
        'untried',
      ]);
      expect(await store.counts()).toMatchObject({ documents: 4, documentsDone: 1, documentsParked: 1 });
      expect(await store.retryFailedDocumentsNow(T0 + 200)).toBe(2);
      const again = await store.dueDocuments(T0 + 200, 10);
      expect(again.map((d) => d.fileReference).sort()).toEqual(['failed', 'parked', 'untried']);
      expect(again.every((d) => d.failures === 0)).toBe(true);
      expect(await store.retryFailedDocumentsNow(T0 + 200)).toBe(0);
    });

    it('claims a document for one writer: another gets it only once the claim ran out, and never once done or parked', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      await recordPolled(
        store,
        poll('job_1', { events: [event('se_1', T0)], documents: [doc('se_1', 'a'), doc('se_1', 'b')] }),
        T0,
      );
      const listed = await store.dueDocuments(T0, 10);
      const [a, b] = ['a', 'b'].map((ref) => listed.find((d) => d.fileReference === ref));
      // The writers' clock; a claim's time passes by the store's (place.claimTimePasses).
      let at = T0;
      const claim = (held?: number) => ({ now: at, ms: 60_000, ...(held === undefined ? {} : { held }) });
      const passes = async (ms: number) => {
        at += ms;
        await place.claimTimePasses(ms);
      };
      const dueNow = async () => (await store.dueDocuments(at, 10)).map((d) => [d.fileReference, d.state]);
      const first = await store.claimDocument(a!, claim());
      expect(first).toBeDefined();
      // Another agent with the same due list, later: claimed, not due.
      await passes(30_000);
      expect(await store.claimDocument(a!, claim())).toBeUndefined();
      expect(await dueNow()).toEqual([['b', 'pending']]);
      // The writer died: its claim runs out and the document is due, `writing`, to be taken again.
      await passes(30_000);
      expect(await dueNow()).toEqual([
        ['b', 'pending'],
        ['a', 'writing'],
      ]);
      const second = await store.claimDocument(a!, claim());
      expect(second).toBeDefined();
      // Its writer renews it before it runs out; the writer whose claim ran out cannot.
      const renewed = await store.claimDocument(a!, claim(second));
      expect(renewed).toBeGreaterThanOrEqual(second!);
      expect(await store.claimDocument(a!, claim(first))).toBeUndefined();
      await passes(30_000);
      expect(await dueNow()).toEqual([['b', 'pending']]);
      await store.markDocumentDone(a!, 'md5', at);
      await passes(60_000);
      expect(await store.claimDocument(a!, claim())).toBeUndefined();
      expect(await store.markDocumentWriting(a!)).toBe(false);
      // A writer whose claim ran out failing late leaves the document done, not to fetch again.
      await store.markDocumentFailed(a!, 'DOCEX_OUTPUT_WRITE: late', at + 100_000);
      expect((await store.documentsOfEvent('se_1')).find((d) => d.fileReference === 'a')!.state).toBe('done');
      await store.markDocumentParked(b!, 'DOCEX_RESPONSE_INVALID: 3 tries');
      expect(await store.claimDocument(b!, claim())).toBeUndefined();
    });

    it('pages events by id in byte order, with their documents, and status files byte for byte', async () => {
      const store = await returns();
      await store.addJobs(
        [newJob('job_b', 1, 'rows.csv', { rowIndex: 2 }), newJob('job_a', 1, 'rows.csv', { rowIndex: 1 })],
        'cursor',
        '1',
        T0,
      );
      // Byte order (SQLite's BINARY): upper case, then `_`, then lower case.
      const ids = ['se_b', 'se_B', 'se__', 'se_a', 'se_Z', 'se_0', 'se_é'];
      await recordPolled(
        store,
        poll('job_a', {
          events: ids.map((id) => event(id, T0)),
          documents: ids.flatMap((id) => [doc(id, 'y', 'job_a'), doc(id, 'x', 'job_a')]),
          done: true,
        }),
        T0,
      );
      await store.recordPoll(poll('job_b', { done: true }), T0);
      const order = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect((await store.eventsOfJobPage('job_a', '', 100)).map((e) => e.id)).toEqual(order);
      expect((await store.eventsOfJobPage('job_a', order[2]!, 2)).map((e) => e.id)).toEqual(
        order.slice(3, 5),
      );
      const page = await store.eventsWithDocumentsPage('job_a', '', 3);
      expect(page.map((p) => [p.event.id, p.documents.map((d) => d.fileReference)])).toEqual(
        order.slice(0, 3).map((id) => [id, ['x', 'y']]),
      );
      expect((await store.jobsOfSource(1)).map((j) => j.jobId)).toEqual(['job_a', 'job_b']);

      const source = (await store.source(1))!;
      const jobs = [];
      for (const job of await store.jobsOfSource(1)) {
        const events = [];
        for (const e of await store.eventsOfJobPage(job.jobId, '', 100)) {
          events.push({ event: e, documents: await store.documentsOfEvent(e.id) });
        }
        jobs.push({ job, events });
      }
      const whole = `${JSON.stringify(buildStatusDocument({ source, jobs }), null, 2)}\n`;
      expect(await collect(statusFileText(store, source))).toBe(whole);

      expect((await store.staleSources(10)).map((s) => s.itemId)).toEqual([1]);
      // A write that answers it wrote nothing leaves the source stale.
      expect(await store.writeStatusAlone(1, async () => false)).toBe(false);
      expect((await store.staleSources(10)).map((s) => s.itemId)).toEqual([1]);
      const handed: [SourceRow, JobRow[]][] = [];
      const wrote = await store.writeStatusAlone(1, async (s, jobs) => {
        handed.push([s, jobs]);
        return true;
      });
      expect(wrote).toBe(true);
      expect(handed).toEqual([[source, await store.jobsOfSource(1)]]);
      expect(handed[0]![1].length).toBeGreaterThan(0);
      expect(await store.staleSources(10)).toEqual([]);
      expect((await store.source(1))!.writtenVersion).toBe(source.version);
      // No such source: nothing to write.
      expect(await store.writeStatusAlone(999, async () => true)).toBe(false);
    });

    it('pages the events final on a day by (final time, id) with their job, file and documents, for the daily CSV', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf'), newJob('job_2', 2, 'b.pdf')], 'cursor', '1', T0);
      const n = 23;
      await recordPolled(
        store,
        poll('job_1', {
          events: Array.from({ length: n }, (_, i) =>
            event(`se_${String(i).padStart(2, '0')}`, T0 + (i % 4)),
          ),
          documents: [doc('se_03', 'p')],
        }),
        T0,
      );
      await recordPolled(store, poll('job_2', { events: [event('se_x', T0 + 1), event('se_open')] }), T0);
      expect(await store.countFinalOn(DAY)).toBe(n + 1);
      const read: string[] = [];
      for (let after: { finalAt: number; id: string } | undefined; ; ) {
        const pageRows = await store.eventsFinalOnPage(DAY, after, 5);
        for (const row of pageRows) {
          read.push(row.event.id);
          expect(row.job.jobId).toBe(row.event.jobId);
          expect(row.source.itemId).toBe(row.job.sourceId);
          expect(row.documents.map((d) => d.fileReference)).toEqual(row.event.id === 'se_03' ? ['p'] : []);
        }
        if (pageRows.length < 5) break;
        const last = pageRows[pageRows.length - 1]!.event;
        after = { finalAt: last.finalAt!, id: last.id };
      }
      const all = await store.eventsFinalOnPage(DAY, undefined, 1000);
      expect(read).toEqual(all.map((e) => e.event.id));
      expect(read).toHaveLength(n + 1);
      const sorted = [...all].sort(
        (a, b) => a.event.finalAt! - b.event.finalAt! || (a.event.id < b.event.id ? -1 : 1),
      );
      expect(all.map((e) => e.event.id)).toEqual(sorted.map((e) => e.event.id));
      expect(await collect(dailyCsvText(store, DAY))).toBe(renderCsv(all));

      expect(await store.csvDaysDue('2023-11-15')).toEqual([DAY]);
      expect(await store.csvDaysDue(DAY)).toEqual([]);
      await store.recordCsv(DAY, n + 1, T0);
      await store.recordCsv(DAY, n + 1, T0 + 1);
      expect(await store.csvDaysDue('2023-11-15')).toEqual([]);
    });

    it('tells when every document of a file is written', async () => {
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      expect(await store.allDocumentsDone(1)).toBe(true);
      await recordPolled(
        store,
        poll('job_1', { events: [event('se_1', T0)], documents: [doc('se_1', 'p')] }),
        T0,
      );
      expect(await store.allDocumentsDone(1)).toBe(false);
      const [d] = await store.dueDocuments(T0, 10);
      await store.markDocumentDone(d!, undefined, T0);
      expect(await store.allDocumentsDone(1)).toBe(true);
    });

    it('keeps everything across a reopen, and opens alongside another store of the same place', async () => {
      const [one, two] = await Promise.all([returns(), returns()]);
      await one.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      expect((await two.job('job_1'))?.jobId).toBe('job_1');
      await one.close();
      const again = await returns();
      expect(await again.getMeta('cursor')).toBe('1');
    });

    it('is not created by a command that only uses an existing one', async () => {
      expect(await openExistingReturnsStore(place.location, place.stateDir, clock)).toBeUndefined();
      expect(await openExistingReturnsStore(place.location, place.stateDir, clock)).toBeUndefined();
      expect((await place.tables()).filter((t) => t.startsWith('returns'))).toEqual([]);
      const store = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      const existing = track((await openExistingReturnsStore(place.location, place.stateDir, clock))!);
      expect(await existing.reopenJob('job_1', T0 + 1)).toBe(true);
    });

    it('refuses a store written by a newer agent with DOCEX_RETURNS_STORE_VERSION', async () => {
      await (await returns()).close();
      await place.exec(
        place.location.kind === 'sqlite'
          ? 'INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)'
          : 'INSERT INTO returns_schema_migrations (version, applied_at) VALUES (99, 0)',
      );
      await expect(openReturnsStore(place.location, place.stateDir, clock)).rejects.toMatchObject({
        code: 'DOCEX_RETURNS_STORE_VERSION',
      });
    });
  });

  describe('returns reader', () => {
    it('reads nothing before the store exists, without creating anything, then the proofs and a followed job', async () => {
      const reader = track(openReturnsReader(place.location, place.stateDir, { busyTimeoutMs: 2000 }));
      const before = await place.tables();
      expect(await reader.proofsArchived()).toBeUndefined();
      expect(await reader.followedJob('job_1')).toBeUndefined();
      expect(await place.tables()).toEqual(before);

      const store: ReturnsStore = await returns();
      await store.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', T0);
      await recordPolled(
        store,
        poll('job_1', {
          events: [event('se_1', T0 + 50)],
          documents: [doc('se_1', 'receipt'), { ...doc('se_1', 'proof'), type: 'AN_EARLIER_TYPE' }],
          done: true,
        }),
        T0,
      );
      const [first] = await store.dueDocuments(T0, 1);
      await store.markDocumentDone(first!, undefined, T0);
      expect(await reader.proofsArchived()).toBe(1);
      const followed = await reader.followedJob('job_1');
      expect(followed?.job).toMatchObject({ jobId: 'job_1', done: true });
      expect(followed?.events.map((e) => [e.id, e.finalAt])).toEqual([['se_1', T0 + 50]]);
      expect(followed?.documents.map((d) => d.type)).toEqual(['AN_EARLIER_TYPE', 'DELIVERY_PROOF']);
      expect(await reader.followedJob('job_unknown')).toEqual({ job: undefined, events: [], documents: [] });
    });
  });

  describe('inbox store', () => {
    it('keeps saved ids and the mark across a reopen; the mark only moves forward, forgetting ids behind it', async () => {
      const store = await inbox();
      await store.markSaved({ id: 'old', createdAt: 100, stem: 'x' });
      await store.markSaved({ id: 'recent', createdAt: 950, stem: 'y' });
      await store.markSaved({ id: 'recent', createdAt: 950, stem: 'y' });
      expect(await store.savedCount()).toBe(2);
      expect(await store.highWaterMark()).toBeUndefined();
      await store.advanceHighWaterMark(1000, 200);
      expect(await store.highWaterMark()).toBe(1000);
      await store.advanceHighWaterMark(900, 0);
      expect(await store.highWaterMark()).toBe(1000);
      expect(await store.isSaved('old')).toBe(false);
      expect(await store.isSaved('recent')).toBe(true);
      // A mark that does not move prunes nothing.
      await store.advanceHighWaterMark(1000, 0);
      expect(await store.isSaved('recent')).toBe(true);
      await store.close();
      const again = await inbox();
      expect(await again.highWaterMark()).toBe(1000);
      expect(await again.isSaved('recent')).toBe(true);
      await again.advanceHighWaterMark(T0, 0);
      expect(await again.highWaterMark()).toBe(T0);
    });

    it('remembers a webhook id: new the first time only, also after a reopen', async () => {
      const store = await inbox();
      expect(await store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(true);
      expect(await store.rememberWebhook('msg_1', 'job.status.changed', 60_000)).toBe(false);
      await store.close();
      const again = await inbox();
      expect(await again.rememberWebhook('msg_1', undefined, 60_000)).toBe(false);
      expect(await again.rememberWebhook('msg_2', undefined, 60_000)).toBe(true);
    });

    it('tells whether a webhook id is remembered, without remembering it', async () => {
      const store = await inbox();
      expect(await store.webhookSeen('msg_read')).toBe(false);
      expect(await store.webhookSeen('msg_read')).toBe(false);
      expect(await store.rememberWebhook('msg_read', undefined, 60_000)).toBe(true);
      expect(await store.webhookSeen('msg_read')).toBe(true);
    });

    it('answers exactly one of many concurrent deliveries of one webhook id as new, across stores', async () => {
      const stores = [await inbox(), await inbox()];
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) => stores[i % 2]!.rememberWebhook('msg_race', 'x', 60_000)),
      );
      expect(answers.filter(Boolean)).toHaveLength(1);
    });

    it('forgets webhook ids older than the memory', async () => {
      const store = await inbox();
      expect(await store.rememberWebhook('msg_old', undefined, 60_000)).toBe(true);
      clock.advance(2 * 3_600_000);
      // The next new id prunes (at most once an hour) what is older than the memory.
      expect(await store.rememberWebhook('msg_new', undefined, 60_000)).toBe(true);
      expect(await store.rememberWebhook('msg_old', undefined, 60_000)).toBe(true);
    });

    it('refuses a store written by a newer agent with DOCEX_INBOX_VERSION', async () => {
      await (await inbox()).close();
      await place.exec(
        place.location.kind === 'sqlite'
          ? 'INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)'
          : 'INSERT INTO inbox_schema_migrations (version, applied_at) VALUES (99, 0)',
      );
      await expect(openInboxStore(place.location, place.stateDir, clock)).rejects.toMatchObject({
        code: 'DOCEX_INBOX_VERSION',
      });
    });
  });
}

describe('the return path stores on SQLite files in the state folder', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  conformance(async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'docex-returns-conformance-'));
    dirs.push(stateDir);
    return {
      location: { kind: 'sqlite', file: path.join(stateDir, 'journal.sqlite') },
      stateDir,
      // The SQL goes to the file the test just wrote: the inbox's or the returns store's.
      async exec(sql) {
        for (const file of ['returns.sqlite', 'inbox.sqlite']) {
          if (!existsSync(path.join(stateDir, file))) continue;
          const db = new Database(path.join(stateDir, file));
          try {
            db.exec(sql);
          } finally {
            db.close();
          }
        }
      },
      async tables() {
        return readdirSync(stateDir).filter((f) => f.endsWith('.sqlite'));
      },
      async claimTimePasses() {},
    };
  });
});

describePostgres('the return path stores in the journal’s PostgreSQL database', () => {
  conformance(async () => {
    const url = await testDatabase();
    const run = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return await fn(client);
      } finally {
        await client.end();
      }
    };
    return {
      location: { kind: 'postgres', connection: { url, poolSize: 4, timeoutMs: 10_000 } },
      stateDir: '/nonexistent/state',
      async exec(sql) {
        await run((client) => client.query(sql));
      },
      async tables() {
        return run(async (client) =>
          (
            await client.query<{ name: string }>(
              "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
            )
          ).rows.map((r) => r.name),
        );
      },
      async claimTimePasses(ms) {
        await run((client) =>
          client.query(
            "UPDATE returns_documents SET next_try_at = next_try_at - $1 WHERE state = 'writing'",
            [ms],
          ),
        );
      },
    };
  });
});

describePostgres('the returns store on PostgreSQL when another agent inserts the same source at once', () => {
  /** Runs `blocked` while an open transaction holds `sql`'s rows, and commits it once `blocked` waits on them. */
  async function whileUncommitted<T>(url: string, sql: string, blocked: () => Promise<T>): Promise<T> {
    const other = new pg.Client({ connectionString: url });
    const watch = new pg.Client({ connectionString: url });
    await Promise.all([other.connect(), watch.connect()]);
    try {
      await other.query('BEGIN');
      await other.query(sql);
      const result = blocked();
      // The store's statement waits on the unique index for the other transaction's outcome.
      for (;;) {
        const { rows } = await watch.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
          [(other as unknown as { processID: number }).processID],
        );
        if (rows[0]!.n > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await other.query('COMMIT');
      return await result;
    } finally {
      await Promise.all([other.end(), watch.end()]);
    }
  }

  let store: ReturnsStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  const open = async (url: string) => {
    store = await openReturnsStore(
      { kind: 'postgres', connection: { url, poolSize: 2, timeoutMs: 10_000 } },
      '/nonexistent/state',
      new ManualClock(T0),
    );
    return store;
  };

  it('numbers the status file when another agent took its plain name while the insert waited', async () => {
    const url = await testDatabase();
    const returns = await open(url);
    const plain = `${DAY}/same.pdf.status.json`;
    const added = await whileUncommitted(
      url,
      `INSERT INTO returns_sources (item_id, folder, file_name, sha256, claimed_at, day, status_path)
       VALUES (1, 'pdf', 'same.pdf', 'ab', ${T0}, '${DAY}', '${plain}')`,
      () => returns.addJobs([newJob('job_b', 2, 'same.pdf')], 'cursor', '2', T0),
    );
    expect(added).toBe(1);
    expect((await returns.source(2))?.statusPath).toBe(`${DAY}/same.pdf.2.status.json`);
    expect((await returns.job('job_b'))?.sourceId).toBe(2);
    expect(await returns.getMeta('cursor')).toBe('2');
  });

  it('adds the job to the source another agent inserted while the insert waited, moving its version once', async () => {
    const url = await testDatabase();
    const returns = await open(url);
    const added = await whileUncommitted(
      url,
      `INSERT INTO returns_sources (item_id, folder, file_name, sha256, claimed_at, day, status_path)
       VALUES (1, 'pdf', 'a.pdf', 'ab', ${T0}, '${DAY}', '${DAY}/a.pdf.status.json')`,
      () => returns.addJobs([newJob('job_a', 1, 'a.pdf')], 'cursor', '1', T0),
    );
    expect(added).toBe(1);
    const source = await returns.source(1);
    expect(source?.statusPath).toBe(`${DAY}/a.pdf.status.json`);
    expect(source?.version).toBe(2);
    expect((await returns.job('job_a'))?.sourceId).toBe(1);
    expect(await returns.getMeta('cursor')).toBe('1');
  });
});

describePostgres(
  'document claims on PostgreSQL, by the database’s clock whatever the agents’ clocks say',
  () => {
    const CLAIM_MS = 60_000;
    const SKEW_MS = 5 * 60_000;
    const stores: ReturnsStore[] = [];
    const clients: pg.Client[] = [];
    afterEach(async () => {
      for (const store of stores.splice(0)) await store.close();
      for (const client of clients.splice(0)) await client.end();
    });

    it('keeps a claim from an agent whose clock is minutes ahead, and gives one that ran out by the database’s time to an agent whose clock is minutes behind', async () => {
      const url = await testDatabase();
      const sql = new pg.Client({ connectionString: url });
      await sql.connect();
      clients.push(sql);
      // Two agents' clocks, ten minutes apart, around the database's.
      const real = Date.now();
      const behind = new ManualClock(real - SKEW_MS);
      const ahead = new ManualClock(real + SKEW_MS);
      const location: JournalLocation = {
        kind: 'postgres',
        connection: { url, poolSize: 2, timeoutMs: 10_000 },
      };
      const slow = await openReturnsStore(location, '/nonexistent/state', behind);
      const fast = await openReturnsStore(location, '/nonexistent/state', ahead);
      stores.push(slow, fast);
      await slow.addJobs([newJob('job_1', 1, 'a.pdf')], 'cursor', '1', behind.now());
      // Two proofs due by both clocks.
      const early = (ref: string) => ({ ...doc('se_1', ref), nextTryAt: real - 2 * SKEW_MS });
      await recordPolled(
        slow,
        poll('job_1', { events: [event('se_1', T0)], documents: [early('x'), early('y')] }),
        behind.now(),
      );
      const x = { sendingEventId: 'se_1', fileReference: 'x' };
      const y = { sendingEventId: 'se_1', fileReference: 'y' };
      const claim = (clock: ManualClock, held?: number) => ({
        now: clock.now(),
        ms: CLAIM_MS,
        ...(held === undefined ? {} : { held }),
      });
      const leftMs = async (ref: string) =>
        Number(
          (
            await sql.query(
              `SELECT next_try_at - (extract(epoch FROM now()) * 1000)::bigint AS left_ms
             FROM returns_documents WHERE file_reference = $1`,
              [ref],
            )
          ).rows[0].left_ms,
        );

      // The agent whose clock is behind claims x: the claim ends CLAIM_MS after the database's now.
      expect(await slow.claimDocument(x, claim(behind))).toBeDefined();
      expect(await leftMs('x')).toBeGreaterThan(CLAIM_MS - 10_000);
      expect(await leftMs('x')).toBeLessThanOrEqual(CLAIM_MS);
      // The agent whose clock is minutes past that end neither lists it nor takes it.
      expect((await fast.dueDocuments(ahead.now(), 10)).map((d) => d.fileReference)).toEqual(['y']);
      expect(await fast.claimDocument(x, claim(ahead))).toBeUndefined();

      // The agent whose clock is ahead claims y and dies; its claim runs out by the database's clock
      // (its end set a second in the past): the agent whose clock is behind that end takes it.
      const heldByFast = await fast.claimDocument(y, claim(ahead));
      expect(heldByFast).toBeDefined();
      expect(await slow.claimDocument(y, claim(behind))).toBeUndefined();
      await sql.query(
        `UPDATE returns_documents SET next_try_at = (extract(epoch FROM now()) * 1000)::bigint - 1000
       WHERE file_reference = 'y'`,
      );
      expect((await slow.dueDocuments(behind.now(), 10)).map((d) => [d.fileReference, d.state])).toEqual([
        ['y', 'writing'],
      ]);
      const heldBySlow = await slow.claimDocument(y, claim(behind));
      expect(heldBySlow).toBeDefined();
      // The agent that lost it can no longer renew it; the one holding it can.
      expect(await fast.claimDocument(y, claim(ahead, heldByFast))).toBeUndefined();
      expect(await slow.claimDocument(y, claim(behind, heldBySlow))).toBeDefined();
    });
  },
);
