/**
 * The pure step of a poll (poll-step.ts), table by table: events and stored state in, decisions
 * out. What a page records, which events are newly final, which documents are wanted, when a page
 * is settled; when a job is given up; and the settle rule with the next poll time. The names of
 * documents that collide come from proof-names.ts (namesWhenTaken).
 */
import { describe, expect, it } from 'vitest';
import type { Job, SendingEvent, SendingEventDocument } from '../../src/domain/wire.js';
import {
  addPage,
  afterNotFound,
  judgeEnd,
  judgePage,
  NOT_FOUND_GRACE_MS,
  type PageRules,
  pollStart,
  startTally,
} from '../../src/returns/poll-step.js';
import { namesWhenTaken, proofName } from '../../src/returns/proof-names.js';
import type { EventRow, JobRow } from '../../src/returns/store.js';

const NOW = Date.parse('2026-11-21T10:00:00Z');
const HOUR = 3_600_000;
const rules: PageRules = { documentTypes: new Set(['DELIVERY_PROOF']), documentWaitMs: HOUR };
const timing = {
  firstPollMs: 10_000,
  minIntervalMs: 15_000,
  maxIntervalMs: 15 * 60_000,
  intervalWhileWebhooksMs: 30 * 60_000,
  maxFollowMs: 30 * 86_400_000,
};

const doc = (type: string, fileReference = `ref-${type}`): SendingEventDocument => ({
  type,
  fileReference,
  name: 'doc.pdf',
  contentType: 'application/pdf',
});
const event = (
  id: string,
  businessStatus: string,
  documents: SendingEventDocument[] = [],
  status = 'SUCCESS',
): SendingEvent => ({ id, jobId: 'job_1', status, businessStatus, documents }) as SendingEvent;
const stored = (e: SendingEvent, finalAt?: number): Pick<EventRow, 'eventJson' | 'finalAt'> => ({
  eventJson: JSON.stringify(e),
  finalAt,
});

const row = (over: Partial<JobRow> = {}): JobRow => ({
  jobId: 'job_1',
  sourceId: 1,
  itemId: 1,
  rowIndex: undefined,
  label: undefined,
  jobName: undefined,
  recordedAt: NOW - HOUR,
  status: 'PROCESSING',
  jobJson: '{"id":"job_1","status":"PROCESSING"}',
  nextPollAt: NOW,
  unchangedPolls: 2,
  polls: 3,
  done: false,
  gaveUp: undefined,
  ...over,
});

describe('one page of a poll, judged', () => {
  const proof = doc('DELIVERY_PROOF');
  const pending = event('se_1', 'IN_PROGRESS', [], 'IN_PROGRESS');
  const final = event('se_1', 'SUCCESS', [proof, doc('ORIGINAL')]);
  const finalBare = event('se_1', 'SUCCESS');

  interface PageCase {
    case: string;
    events: SendingEvent[];
    /** Events as recorded before, with their final time. */
    recorded: [SendingEvent, number | undefined][];
    changed: boolean;
    newlyFinal: string[];
    wanted: string[];
    settled: boolean;
    finalAt: number | undefined;
  }
  it.each<PageCase>([
    {
      case: 'a new event not final yet',
      events: [pending],
      recorded: [],
      changed: true,
      newlyFinal: [],
      wanted: [],
      settled: false,
      finalAt: undefined,
    },
    {
      case: 'the same event as recorded, not final',
      events: [pending],
      recorded: [[pending, undefined]],
      changed: false,
      newlyFinal: [],
      wanted: [],
      settled: false,
      finalAt: undefined,
    },
    {
      case: 'an event final for the first time, with its proof',
      events: [final],
      recorded: [[pending, undefined]],
      changed: true,
      newlyFinal: ['se_1'],
      wanted: ['ref-DELIVERY_PROOF'],
      settled: true,
      finalAt: NOW,
    },
    {
      case: 'a final event seen again: its final time is kept, nothing is newly final',
      events: [final],
      recorded: [[final, NOW - HOUR]],
      changed: false,
      newlyFinal: [],
      wanted: ['ref-DELIVERY_PROOF'],
      settled: true,
      finalAt: NOW - HOUR,
    },
    {
      case: 'a final event without a wanted document, within documentWaitMs',
      events: [finalBare],
      recorded: [[finalBare, NOW - HOUR + 1]],
      changed: false,
      newlyFinal: [],
      wanted: [],
      settled: false,
      finalAt: NOW - HOUR + 1,
    },
    {
      case: 'a final event without a wanted document, past documentWaitMs',
      events: [finalBare],
      recorded: [[finalBare, NOW - HOUR]],
      changed: false,
      newlyFinal: [],
      wanted: [],
      settled: true,
      finalAt: NOW - HOUR,
    },
    {
      case: 'a final event with only documents of other types, just final',
      events: [event('se_1', 'SUCCESS', [doc('ORIGINAL')])],
      recorded: [],
      changed: true,
      newlyFinal: ['se_1'],
      wanted: [],
      settled: false,
      finalAt: NOW,
    },
  ])('$case', (t) => {
    const recorded = new Map(t.recorded.map(([e, at]) => [e.id, stored(e, at)]));
    const page = judgePage(t.events, recorded, NOW, rules);
    expect(page.changed).toBe(t.changed);
    expect(page.newlyFinal.map((e) => e.id)).toEqual(t.newlyFinal);
    expect(page.wanted.map((w) => w.document.fileReference)).toEqual(t.wanted);
    expect(page.settled).toBe(t.settled);
    expect(page.records).toHaveLength(1);
    expect(page.records[0]).toMatchObject({ id: 'se_1', json: JSON.stringify(t.events[0]) });
    expect(page.records[0]!.finalAt).toBe(t.finalAt);
    expect(page.records[0]!.finalDay).toBe(t.finalAt === undefined ? undefined : '2026-11-21');
  });

  it('keeps a page unsettled when any one event is, and lists the wanted documents in page order', () => {
    const a = event('se_a', 'SUCCESS', [doc('DELIVERY_PROOF', 'a1'), doc('DELIVERY_PROOF', 'a2')]);
    const b = event('se_b', 'IN_PROGRESS', [], 'IN_PROGRESS');
    const c = event('se_c', 'FAILURE', [doc('DELIVERY_PROOF', 'c1')], 'FAILURE');
    const page = judgePage([a, b, c], new Map(), NOW, rules);
    expect(page.settled).toBe(false);
    expect(page.newlyFinal.map((e) => e.id)).toEqual(['se_a', 'se_c']);
    expect(page.wanted.map((w) => [w.event.id, w.document.fileReference])).toEqual([
      ['se_a', 'a1'],
      ['se_a', 'a2'],
      ['se_c', 'c1'],
    ]);
    expect(judgePage([a, c], new Map(), NOW, rules).settled).toBe(true);
  });
});

describe('before any call', () => {
  it.each([
    {
      case: 'a job followed past maxFollowMs is given up with its stored status',
      row: row({ recordedAt: NOW - timing.maxFollowMs - 1 }),
      giveUp: { why: 'not final after follow.maxFollowMs', status: 'PROCESSING' },
    },
    {
      case: 'a job never answered and past maxFollowMs is given up as UNKNOWN',
      row: row({ recordedAt: NOW - timing.maxFollowMs - 1, status: undefined, jobJson: undefined }),
      giveUp: { why: 'not final after follow.maxFollowMs', status: 'UNKNOWN', jobJson: '{}' },
    },
    { case: 'a job not final is asked for', row: row(), fetch: true },
    {
      case: 'a final job is not asked for again: its stored record stands',
      row: row({ status: 'COMPLETED', jobJson: '{"id":"job_1","status":"COMPLETED"}' }),
      fetch: false,
    },
  ])('$case', (t) => {
    const start = pollStart(t.row, NOW, timing);
    if (t.giveUp) {
      expect(start.giveUp?.why).toBe(t.giveUp.why);
      expect(start.giveUp?.record).toMatchObject({
        status: t.giveUp.status,
        done: true,
        changed: true,
        gaveUp: t.giveUp.why,
        nextPollAt: NOW,
        unchangedPolls: t.row.unchangedPolls,
        ...(t.giveUp.jobJson ? { jobJson: t.giveUp.jobJson } : {}),
      });
      return;
    }
    if (start.giveUp) throw new Error('given up');
    expect(start.fetch).toBe(t.fetch);
    expect(start.stored).toEqual(JSON.parse(t.row.jobJson!));
  });

  it('retries a 404 within the grace after the job was recorded, and gives it up from then on', () => {
    expect(afterNotFound(row({ recordedAt: NOW - NOT_FOUND_GRACE_MS + 1 }), NOW)).toBeUndefined();
    expect(afterNotFound(row({ recordedAt: NOW - NOT_FOUND_GRACE_MS }), NOW)).toMatchObject({
      why: 'the service no longer knows the job',
      record: {
        status: 'NOT_FOUND',
        jobJson: '{}',
        done: true,
        gaveUp: 'the service no longer knows the job',
      },
    });
  });
});

describe('the job after its last page (the settle rule)', () => {
  const settledPage = judgePage([event('se_1', 'SUCCESS', [doc('DELIVERY_PROOF')])], new Map(), NOW, rules);
  const openPage = judgePage([event('se_1', 'IN_PROGRESS', [], 'IN_PROGRESS')], new Map(), NOW, rules);
  const job = (status: string, sendingEventCount: number) =>
    ({ id: 'job_1', status, sendingEventCount }) as Job;

  it.each([
    {
      case: 'final, every event listed and settled: done',
      job: job('COMPLETED', 1),
      page: settledPage,
      done: true,
    },
    { case: 'a failed job is final too', job: job('FAILED', 1), page: settledPage, done: true },
    { case: 'not final: followed on', job: job('PROCESSING', 1), page: settledPage, done: false },
    {
      case: 'fewer events listed than counted: followed on',
      job: job('COMPLETED', 2),
      page: settledPage,
      done: false,
    },
    { case: 'an event not settled: followed on', job: job('COMPLETED', 1), page: openPage, done: false },
    { case: 'no job answer at all: followed on', job: undefined, page: settledPage, done: false },
  ])('$case', (t) => {
    const tally = addPage(startTally(row(), t.job), 1, t.page);
    expect(judgeEnd(row(), t.job, tally, NOW, false, timing).done).toBe(t.done);
  });

  it('counts unchanged polls up, back to zero on a change, and stretches the next poll with them', () => {
    const same = { id: 'job_1', status: 'PROCESSING', sendingEventCount: 1 } as Job;
    const pending = event('se_1', 'IN_PROGRESS', [], 'IN_PROGRESS');
    const unchangedPage = judgePage([pending], new Map([['se_1', stored(pending)]]), NOW, rules);
    const quiet = judgeEnd(
      row(),
      same,
      addPage(startTally(row(), same), 1, unchangedPage),
      NOW,
      false,
      timing,
    );
    expect(quiet).toMatchObject({ changed: false, unchangedPolls: 3, nextPollAt: NOW + 15_000 * 8 });
    expect(quiet.jobJson).toBe(JSON.stringify(same));

    const moved = { ...same, status: 'COMPLETED' } as Job;
    const changed = judgeEnd(
      row(),
      moved,
      addPage(startTally(row(), moved), 1, unchangedPage),
      NOW,
      false,
      timing,
    );
    expect(changed).toMatchObject({
      changed: true,
      unchangedPolls: 0,
      nextPollAt: NOW + 15_000,
      status: 'COMPLETED',
    });

    const whileWebhooks = judgeEnd(row(), moved, startTally(row(), moved), NOW, true, timing);
    expect(whileWebhooks.nextPollAt).toBe(NOW + timing.intervalWhileWebhooksMs);
  });
});

describe('proof names of documents that collide', () => {
  it('names a document by the template, then tries the file reference, then a counter after it', () => {
    const owner = { day: '2026-11-21', folder: 'pdf', fileName: 'inv-1.pdf', jobId: 'job_1' };
    const named = proofName(
      '<date>/<stem>/<sendingEventId>-<type>.<ext>',
      owner,
      'se_1',
      doc('DELIVERY_PROOF', 'a:ref.pdf'),
    );
    expect(named).toBe('2026-11-21/inv-1/se_1-DELIVERY_PROOF.pdf');
    const tries = namesWhenTaken(named, 'a:ref.pdf');
    expect([tries.next().value, tries.next().value, tries.next().value]).toEqual([
      '2026-11-21/inv-1/se_1-DELIVERY_PROOF-a_ref.pdf',
      '2026-11-21/inv-1/se_1-DELIVERY_PROOF-a_ref-2.pdf',
      '2026-11-21/inv-1/se_1-DELIVERY_PROOF-a_ref-3.pdf',
    ]);
    // Without an extension the suffix goes at the end; a dot in a folder is not an extension.
    expect(namesWhenTaken('v1.0/proof', 'r').next().value).toBe('v1.0/proof-r');
  });
});
