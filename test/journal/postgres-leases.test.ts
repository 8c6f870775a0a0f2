/**
 * Leases on a real PostgreSQL server: several journals (agents) on one database. A claim is held
 * by its claimer; a lease that ran out (set in the past by SQL: the database's clock decides, no
 * test sleeps) is taken over by exactly one agent with the next epoch; every write of the agent
 * that lost it changes nothing and rejects with DOCEX_LEASE_LOST; a restarted agent takes its own
 * files back at once; a stopping agent releases its files.
 */
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isDocexError } from '../../src/core/errors.js';
import { PostgresJournal } from '../../src/journal/postgres/journal.js';
import { postgresConnection } from '../../src/journal/postgres/pool.js';
import { PostgresJournalReader } from '../../src/journal/postgres/reader.js';
import { LOCK_SPACE } from '../../src/journal/postgres/schema.js';
import type { JournalItem } from '../../src/journal/schema.js';
import type { TakeOverScope } from '../../src/journal/store.js';
import type { ClaimInput, LeaseOptions } from '../../src/journal/types.js';
import { describePostgres, testDatabase } from '../support/postgres.js';
import { claimInput, type JournalHarness, journalHarness, sha256 } from './support/journal-harness.js';
import { toDone } from './support/steps.js';

const LEASE_MS = 60_000;
const MARGIN_MS = 10_000;
const SHARED: TakeOverScope = { folders: ['invoices'], sharedFolders: ['invoices'] };

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (err) {
    return isDocexError(err) ? err.code : `not a DocexError: ${String(err)}`;
  }
  return undefined;
}

describePostgres('leases of files on a shared PostgreSQL journal', () => {
  let h: JournalHarness;
  let url: string;
  const opened: PostgresJournal[] = [];
  const clients: pg.Client[] = [];

  beforeEach(async () => {
    h = journalHarness();
    url = await testDatabase();
  });

  afterEach(async () => {
    for (const journal of opened.splice(0)) await journal.close().catch(() => undefined);
    for (const client of clients.splice(0)) await client.end().catch(() => undefined);
    await h.cleanup();
  });

  /** The agents' monotonic clock, moved by hand. */
  let monotonic = 0;

  async function agent(agentId: string, place = `host-${agentId}:/state`): Promise<PostgresJournal> {
    const lease: LeaseOptions = {
      agentId,
      place,
      leaseMs: LEASE_MS,
      sendMarginMs: MARGIN_MS,
      monotonicNow: () => monotonic,
    };
    const journal = await PostgresJournal.open(postgresConnection(url), {
      clock: h.clock,
      log: h.log,
      lease,
    });
    opened.push(journal);
    return journal;
  }

  async function sql(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  }

  /** The lease of file `id` ended a second ago, by the database's clock. */
  async function expire(id: number): Promise<void> {
    await (await sql()).query("UPDATE items SET lease_until = now() - interval '1 second' WHERE id = $1", [
      id,
    ]);
  }

  async function claimed(
    journal: PostgresJournal,
    overrides: Partial<ClaimInput> = {},
  ): Promise<JournalItem> {
    const result = await journal.recordClaim(claimInput(overrides));
    if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
    return result.item;
  }

  it('records a claim as held by its claimer, epoch 1, until a lease end set by the database', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a);
    expect(item).toMatchObject({ owner: 'a', epoch: 1 });
    const row = (
      await (
        await sql()
      ).query('SELECT extract(epoch FROM lease_until - now()) * 1000 AS left_ms FROM items WHERE id = $1', [
        item.id,
      ])
    ).rows[0];
    expect(Number(row.left_ms)).toBeGreaterThan(LEASE_MS - 5_000);
    expect(Number(row.left_ms)).toBeLessThanOrEqual(LEASE_MS);
    expect(a.holds(item.id)).toBe(true);
    expect(b.holds(item.id)).toBe(false);
  });

  it('refuses every write of an agent that does not hold the file, and changes nothing', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a);
    const before = await a.history(item.id);
    expect(await codeOf(b.transition(item.id, 'validated'))).toBe('DOCEX_LEASE_LOST');
    expect(await codeOf(b.recordFailedTry(item.id, { code: 'DOCEX_NETWORK', nextTryAt: 1 }))).toBe(
      'DOCEX_LEASE_LOST',
    );
    expect(await codeOf(b.clearFailedTries(item.id))).toBe('DOCEX_LEASE_LOST');
    expect(await codeOf(b.leaseForSend(item))).toBe('DOCEX_LEASE_LOST');
    expect(await a.history(item.id)).toEqual(before);
    expect(await a.get(item.id)).toMatchObject({ state: 'claimed', failedTries: 0 });
  });

  it('leaves a file with a live lease to its holder, and takes one whose lease ran out with the next epoch', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a);
    expect(await b.takeOverFiles(SHARED)).toEqual([]);
    await expire(item.id);
    const taken = await b.takeOverFiles(SHARED);
    expect(taken.map((t) => [t.item.id, t.item.owner, t.item.epoch, t.previousOwner])).toEqual([
      [item.id, 'b', 2, 'a'],
    ]);
    expect(taken[0]!.action.kind).toBe('validate');
    expect(b.holds(item.id)).toBe(true);
    // The agent that lost it: its next write changes nothing, its renewal says so.
    expect(await codeOf(a.transition(item.id, 'validated'))).toBe('DOCEX_LEASE_LOST');
    expect(a.holds(item.id)).toBe(false);
    const c = await agent('c');
    const d = await claimed(c, { fileName: 'other.pdf' });
    await expire(d.id);
    await b.takeOverFiles(SHARED);
    expect(await c.renewLeases()).toEqual({ renewed: 0, lost: [{ itemId: d.id, owner: 'b' }] });
    // The new holder goes on.
    expect((await b.transition(item.id, 'validated')).state).toBe('validated');
  });

  it('keeps holding the files it claims while a renewal runs (none judged lost)', async () => {
    const a = await agent('a');
    const claims: Promise<JournalItem>[] = [];
    const renewals: Promise<unknown>[] = [];
    // Interleaved: renewals start while claims are in their transactions, and after them.
    for (let n = 0; n < 30; n++) {
      claims.push(claimed(a, { fileName: `busy-${n}.pdf` }));
      renewals.push(a.renewLeases());
    }
    const items = await Promise.all(claims);
    for (const renewal of (await Promise.all(renewals)) as { lost: unknown[] }[])
      expect(renewal.lost).toEqual([]);
    expect(items.every((i) => a.holds(i.id))).toBe(true);
    expect((await a.renewLeases()).renewed).toBe(30);
  });

  it('does not judge lost a claim whose transaction has not committed when a renewal runs', async () => {
    const a = await agent('a');
    // Hold the history lock exclusively: the claim's transaction stops at its last statement,
    // its item inserted, not committed.
    const blocker = await sql();
    await blocker.query('BEGIN');
    await blocker.query(`SELECT pg_advisory_xact_lock(${LOCK_SPACE.history}, 1)`);
    const claim = claimed(a, { fileName: 'uncommitted.pdf' });
    const waiting = await sql();
    for (;;) {
      const { rows } = await waiting.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
      );
      if (rows[0].n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await a.renewLeases()).toEqual({ renewed: 0, lost: [] });
    await blocker.query('COMMIT');
    const item = await claim;
    expect(a.holds(item.id)).toBe(true);
    expect((await a.transition(item.id, 'validated')).state).toBe('validated');
  });

  it('fences a payload row by its file: a row move of an agent that lost the file changes nothing', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const file = await claimed(a, { mode: 'payload-word', fileName: 'rows.csv' });
    await a.transition(file.id, 'validated');
    const [row] = await a.addRows(file.id, [{ rowIndex: 0, label: 'INV-1', payloadSha256: sha256('r0') }]);
    await expire(file.id);
    await b.takeOverFiles(SHARED);
    expect(await codeOf(a.transition(row!.id, 'creating'))).toBe('DOCEX_LEASE_LOST');
    expect(await codeOf(a.leaseForSend(row!))).toBe('DOCEX_LEASE_LOST');
    expect((await b.get(row!.id))?.state).toBe('validated');
    expect((await b.transition(row!.id, 'creating')).state).toBe('creating');
  });

  it('sends a create within a margin of its claim without a renewal, for the time the claim’s lease leaves', async () => {
    const a = await agent('a');
    const item = await claimed(a);
    // Shortened behind the agent's back: no renewal reads or changes it.
    await (await sql()).query("UPDATE items SET lease_until = now() + interval '5 seconds' WHERE id = $1", [
      item.id,
    ]);
    monotonic += 1_000;
    expect(await a.leaseForSend(item)).toBe(LEASE_MS - MARGIN_MS - 1_000);
    const left = await (await sql()).query(
      "SELECT lease_until < now() + interval '6 seconds' AS short FROM items",
    );
    expect(left.rows[0].short).toBe(true);
  });

  it('sends no create once closing has begun, even right after the claim: closing ends the leases', async () => {
    const a = await agent('a');
    const item = await claimed(a);
    await a.close();
    expect(await codeOf(a.leaseForSend(item))).toBeDefined();
  });

  it('renews the lease before a send a margin after the claim and answers a request time that ends before the lease could', async () => {
    const a = await agent('a');
    const item = await claimed(a);
    monotonic += MARGIN_MS;
    await (await sql()).query("UPDATE items SET lease_until = now() + interval '5 seconds' WHERE id = $1", [
      item.id,
    ]);
    const allowed = await a.leaseForSend(item);
    expect(Number.isInteger(allowed)).toBe(true);
    expect(allowed).toBeGreaterThan(0);
    expect(allowed).toBeLessThanOrEqual(LEASE_MS - 10_000);
    const row = (
      await (
        await sql()
      ).query('SELECT extract(epoch FROM lease_until - now()) * 1000 AS left_ms FROM items WHERE id = $1', [
        item.id,
      ])
    ).rows[0];
    expect(Number(row.left_ms)).toBeGreaterThan(allowed!);
  });

  it('places one copy of a file at a time: the agent that took it over waits while the frozen holder places, and a holder that lost the file places nothing', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a);
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let thaw!: () => void;
    const frozen = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    // a is frozen mid-placement, past its lease: b takes the file over meanwhile.
    const aPlacing = a.placeAlone(item, async () => {
      entered();
      await frozen;
      return 'placed by a';
    });
    await inside;
    await expire(item.id);
    expect((await b.takeOverFiles(SHARED)).map((t) => t.item.epoch)).toEqual([2]);
    let bPlaced = false;
    const bPlacement = () =>
      b.placeAlone(item, async () => {
        bPlaced = true;
        return 'placed by b';
      });
    expect(await codeOf(bPlacement())).toBe('DOCEX_PLACEMENT_BUSY');
    expect(bPlaced).toBe(false);
    thaw();
    expect(await aPlacing).toBe('placed by a');
    // Once a's placement ended, b's goes ahead (and finds a's copy: the pipeline's part).
    expect(await bPlacement()).toBe('placed by b');
    // A holder that lost the file before its placement began places nothing.
    let aPlacedAgain = false;
    expect(
      await codeOf(
        a.placeAlone(item, async () => {
          aPlacedAgain = true;
        }),
      ),
    ).toBe('DOCEX_LEASE_LOST');
    expect(aPlacedAgain).toBe(false);
  });

  it('places the copy of a file it refused at the claim or rejected after it: a final file is no longer held, yet still its own by the same epoch; never another agent’s', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const refusedAtClaim = await a.recordClaim(
      claimInput({
        fileName: 'unrouted.pdf',
        refused: { code: 'DOCEX_INPUT_NO_ROUTE', reason: 'matches none of the routes' },
      }),
    );
    expect(refusedAtClaim.item).toMatchObject({ state: 'rejected', owner: 'a', epoch: 1 });
    const rejected = await a.transition((await claimed(a, { fileName: 'bad.pdf' })).id, 'rejected', {
      code: 'DOCEX_INPUT_UNREADABLE',
      reason: 'not readable',
    });
    for (const item of [refusedAtClaim.item, rejected]) {
      expect(await a.placeAlone(item, async () => 'placed by a')).toBe('placed by a');
      let bPlaced = false;
      expect(
        await codeOf(
          b.placeAlone(item, async () => {
            bPlaced = true;
          }),
        ),
      ).toBe('DOCEX_LEASE_LOST');
      expect(bPlaced).toBe(false);
    }
  });

  it('places after a restart the copy of a file an earlier start of the same agent (same place) refused at the claim and stopped before placing; another place never', async () => {
    const first = await agent('start-1', 'host-x:/var/lib/docex');
    const refused = await first.recordClaim(
      claimInput({
        fileName: 'unrouted.pdf',
        refused: { code: 'DOCEX_INPUT_NO_ROUTE', reason: 'matches none of the routes' },
      }),
    );
    await (await sql()).query(
      "INSERT INTO agents (id, host, pid, version, schema_version, place) VALUES ('start-1', 'host-x', 1, '0', 6, 'host-x:/var/lib/docex')",
    );
    const stranger = await agent('other');
    expect(await codeOf(stranger.placeAlone(refused.item, async () => 'placed'))).toBe('DOCEX_LEASE_LOST');
    const second = await agent('start-2', 'host-x:/var/lib/docex');
    // Final: no start takes it over; the recovery of the spool finds it and places it.
    expect(await second.recoveryPlan({ scope: SHARED })).toEqual([]);
    const found = (await second.byPath(refused.item.sourcePath!))[0]!;
    expect(await second.placeAlone(found, async () => 'placed by start-2')).toBe('placed by start-2');
  });

  it('gives each file whose lease ran out to exactly one of several agents taking over at once', async () => {
    const a = await agent('a');
    const ids: number[] = [];
    for (let n = 0; n < 60; n++) ids.push((await claimed(a, { fileName: `f-${n}.pdf` })).id);
    await (await sql()).query("UPDATE items SET lease_until = now() - interval '1 second'");
    const takers = await Promise.all(['b', 'c', 'd'].map((id) => agent(id)));
    const taken = await Promise.all(takers.map((t) => t.takeOverFiles(SHARED, { limit: 25 })));
    const all = taken.flat().map((t) => t.item.id);
    expect(new Set(all).size).toBe(all.length);
    const rest = await takers[0]!.takeOverFiles(SHARED);
    expect([...all, ...rest.map((t) => t.item.id)].sort((x, y) => x - y)).toEqual(ids);
    const owners = await (await sql()).query('SELECT owner, epoch FROM items');
    expect(owners.rows.every((r) => ['b', 'c', 'd'].includes(r.owner) && r.epoch === 2)).toBe(true);
  });

  it('takes back at once the files of an earlier start of the same agent (same place), whose lease still runs', async () => {
    const first = await agent('start-1', 'host-x:/var/lib/docex');
    const item = await claimed(first);
    await (await sql()).query(
      "INSERT INTO agents (id, host, pid, version, schema_version, place) VALUES ('start-1', 'host-x', 1, '0', 5, 'host-x:/var/lib/docex')",
    );
    const stranger = await agent('other');
    expect(await stranger.takeOverFiles(SHARED)).toEqual([]);
    const second = await agent('start-2', 'host-x:/var/lib/docex');
    const steps = await second.recoveryPlan({ scope: SHARED });
    expect(steps.map((s) => [s.item.id, s.item.owner, s.item.epoch])).toEqual([[item.id, 'start-2', 2]]);
  });

  it('takes files of a folder whose copies only their holder reaches (SFTP spool) from nobody but an earlier start', async () => {
    const a = await agent('a');
    const item = await claimed(a, { folder: 'sftp-in' });
    await expire(item.id);
    const b = await agent('b');
    expect(await b.takeOverFiles({ folders: ['sftp-in'], sharedFolders: [] })).toEqual([]);
    // A folder this agent does not run is never taken, shared or not.
    expect(await b.takeOverFiles(SHARED)).toEqual([]);
  });

  it('answers same-drop to a second copy of a remote file, and hands its item over with the copy once the lease ran out', async () => {
    const remote = (claimedPath: string): Partial<ClaimInput> => ({
      folder: 'sftp-in',
      sourcePath: 'sftp://erp@host:22/outbox/invoice-2026-0001.pdf',
      claimedPath,
      mtimeMs: 1_763_700_000_000,
      remote: true,
    });
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a, remote('/a/spool/.processing/invoice-2026-0001.pdf'));
    await a.transition(item.id, 'validated');
    // The same drop (mtime within the same second), copied by b: not a duplicate, not a new item.
    const copy = await b.recordClaim(
      claimInput({ ...remote('/b/spool/.processing/invoice-2026-0001.pdf'), mtimeMs: 1_763_700_000_400 }),
    );
    expect(copy).toMatchObject({ kind: 'same-drop', item: { id: item.id, owner: 'a' } });
    expect(await b.takeOverCopy(item.id, '/b/spool/.processing/invoice-2026-0001.pdf')).toEqual([]);
    await expire(item.id);
    const taken = await b.takeOverCopy(item.id, '/b/spool/.processing/invoice-2026-0001.pdf');
    expect(taken.map((t) => [t.item.owner, t.item.epoch, t.item.claimedPath, t.previousOwner])).toEqual([
      ['b', 2, '/b/spool/.processing/invoice-2026-0001.pdf', 'a'],
    ]);
    expect(b.holds(item.id)).toBe(true);
    expect(await codeOf(a.transition(item.id, 'creating'))).toBe('DOCEX_LEASE_LOST');
    // Another drop of the same name and content (a later mtime) is a duplicate, as it always was.
    const later = await b.recordClaim(
      claimInput({ ...remote('/c/spool/.processing/invoice-2026-0001.pdf'), mtimeMs: 1_763_700_060_000 }),
    );
    expect(later.kind).toBe('duplicate');
    expect((await a.stats()).files).toMatchObject({ validated: 1, rejected: 1 });
  });

  it('answers same-drop with the final item to a late copy of a remote file already sent', async () => {
    const a = await agent('a');
    const input = {
      folder: 'sftp-in',
      sourcePath: 'sftp://erp@host:22/outbox/late.pdf',
      fileName: 'late.pdf',
      remote: true,
    };
    const item = await claimed(a, { ...input, claimedPath: '/a/late.pdf' });
    await a.transition(item.id, 'rejected', { code: 'DOCEX_INPUT_PDF_CORRUPT', reason: 'not a PDF' });
    const b = await agent('b');
    // The copy's inspection ended just before its claim: answered same-drop, its record still goes.
    await b.inspectionStarting('/b/late.pdf');
    const copy = await b.recordClaim(
      claimInput({ ...input, claimedPath: '/b/late.pdf', inspectedPath: '/b/late.pdf' }),
    );
    expect(copy).toMatchObject({ kind: 'same-drop', item: { id: item.id, state: 'rejected' } });
    expect(await b.interruptedInspections('/b/late.pdf')).toBe(0);
    expect(await b.takeOverCopy(item.id, '/b/late.pdf')).toEqual([]);
  });

  it('answers same-drop to a late claim of a shared file another agent took as an orphan and finished, a duplicate to a new drop of it', async () => {
    const a = await agent('a');
    const b = await agent('b');
    // b recorded the file that a moved into .processing/ and could not record (cut off), and sent it.
    const item = await claimed(b);
    await toDone(b, item.id);
    const late = await a.recordClaim(claimInput({ stillThere: async () => false }));
    expect(late).toMatchObject({ kind: 'same-drop', item: { id: item.id, state: 'done' } });
    // The same name, content and mtime at that path once more: a new drop, refused as a duplicate.
    const again = await a.recordClaim(claimInput({ stillThere: async () => true }));
    expect(again.kind).toBe('duplicate');
    expect((await a.stats()).files).toMatchObject({ done: 1, rejected: 1 });
  });

  it('moves a file from the row it last saw, and decides from the row itself when the row changed behind it', async () => {
    const a = await agent('a');
    const item = await claimed(a);
    const db = await sql();
    // Moved behind the journal's back: the move it would make from `claimed` must not be made.
    await db.query("UPDATE items SET state = 'validated' WHERE id = $1", [item.id]);
    expect((await a.transition(item.id, 'creating')).state).toBe('creating');
    expect((await a.history(item.id)).map((h) => [h.from, h.to])).toEqual([
      [undefined, 'claimed'],
      ['validated', 'creating'],
    ]);
    await db.query("UPDATE items SET state = 'done' WHERE id = $1", [item.id]);
    expect(
      await codeOf(
        a.transition(item.id, 'created', { jobId: 'j', uploadUrl: 'https://u', uploadDeadline: 1 }),
      ),
    ).toBe('DOCEX_JOURNAL_TRANSITION');
    expect((await a.get(item.id))?.state).toBe('done');
  });

  it('releases the files of a stopping agent: another takes them at once', async () => {
    const a = await agent('a');
    const item = await claimed(a);
    await a.close();
    const b = await agent('b');
    expect((await b.takeOverFiles(SHARED)).map((t) => t.item.id)).toEqual([item.id]);
  });

  it('answers in-progress to a second agent recording the same file at the same claimed path, held by the first', async () => {
    const a = await agent('a');
    const b = await agent('b');
    const item = await claimed(a);
    await a.transition(item.id, 'validated');
    const again = await b.recordClaim(
      claimInput({ sourcePath: '/srv/erp/in/.processing/invoice-2026-0001.pdf' }),
    );
    expect(again.kind).toBe('in-progress');
    expect(again.item.id).toBe(item.id);
    expect(b.holds(again.item.id)).toBe(false);
    expect((await a.stats()).files).toMatchObject({ validated: 1, rejected: 0 });
  });

  it('lets other agents write while one is stuck before its COMMIT: the feed reader never queues behind it', async () => {
    const a = await agent('a');
    await claimed(a, { fileName: 'before.pdf' });
    const reader = await PostgresJournalReader.open(postgresConnection(url));
    try {
      const seen = await reader.historyAfter(0, 100);
      expect(seen.map((e) => e.to)).toEqual(['claimed']);
      // Another agent's transaction, stopped between its history insert and its COMMIT.
      const frozen = await sql();
      await frozen.query('BEGIN');
      await frozen.query(`SELECT pg_advisory_xact_lock_shared(${LOCK_SPACE.history}, 1)`);
      const within = <T>(work: Promise<T>) =>
        Promise.race([
          work,
          new Promise<never>((_, reject) =>
            setTimeout(() => reject(new Error('stalled behind the stopped transaction')), 15_000).unref(),
          ),
        ]);
      const feed = within(reader.historyAfter(seen.at(-1)!.id, 100));
      const write = within(claimed(a, { fileName: 'during.pdf' }));
      expect(await feed).toEqual([]);
      expect((await write).fileName).toBe('during.pdf');
      await frozen.query('COMMIT');
      expect((await reader.historyAfter(seen.at(-1)!.id, 100)).map((e) => e.to)).toEqual(['claimed']);
    } finally {
      await reader.close();
    }
  });
});
