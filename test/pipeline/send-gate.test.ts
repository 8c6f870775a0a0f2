/**
 * The send gate reads freshness from the item in hand: the item recordIntent answered is sent
 * without a lookup, once; the same intent read back from the journal is looked up first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HostPace } from '../../src/api/host-pace.js';
import { ApiError } from '../../src/api/index.js';
import { Pacing } from '../../src/api/pacing.js';
import { retryPolicy } from '../../src/api/retry.js';
import { withRetry } from '../../src/api/retry-loop.js';
import { isDocexError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';
import type { Job } from '../../src/domain/wire.js';
import { callOptions } from '../../src/pipeline/call-options.js';
import { classifyFailure } from '../../src/pipeline/retry-policy.js';
import { recordIntent, type SendAllowance, sendOnce } from '../../src/pipeline/send-gate.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
import { waitFor } from '../support/wait-for.js';
import { makePartWorld, type PartWorld } from './support/step-context.js';

const worlds: PartWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

async function setUp() {
  const world = makePartWorld(['pdf']);
  worlds.push(world);
  const lookups: string[] = [];
  world.ctx.jobs = {
    async *iterate() {
      lookups.push('iterate');
      yield* [] as Job[];
    },
  } as unknown as PipelineJobs;
  const item = await world.recordClaim('pdf', world.putClaimed('pdf', 'a.pdf', 'content'));
  await world.journal.transition(item.id, 'validated');
  return { world, runtime: world.folders.get('pdf')!, itemId: item.id, lookups };
}

describe('sendOnce and intent freshness', () => {
  it('sends the intent recordIntent answered without a lookup, and looks up before sending it again', async () => {
    const { world, runtime, itemId, lookups } = await setUp();
    const fresh = await recordIntent(world.ctx, itemId);
    const sent: string[] = [];
    const send = async (jobName: string) => sent.push(jobName);
    expect(await sendOnce(world.ctx, runtime, fresh, send)).toMatchObject({ kind: 'sent' });
    expect(lookups).toEqual([]);
    await sendOnce(world.ctx, runtime, fresh, send);
    expect(lookups).toEqual(['iterate']);
    expect(sent).toEqual([fresh.jobName, fresh.jobName]);
  });

  it('looks up an intent read back from the journal, though this process recorded it and sent nothing', async () => {
    const { world, runtime, itemId, lookups } = await setUp();
    await recordIntent(world.ctx, itemId);
    const reread = (await world.journal.get(itemId))!;
    expect(reread.state).toBe('creating');
    await sendOnce(world.ctx, runtime, reread, async () => 'sent');
    expect(lookups).toEqual(['iterate']);
  });

  it('does not send again a create that got no answer while the lookup finds no job, until the answer timeout has passed since it was sent', async () => {
    const { world, runtime, itemId, lookups } = await setUp();
    world.ctx.unansweredSettleMs = 60_000;
    const fresh = await recordIntent(world.ctx, itemId);
    const sent: string[] = [];
    const unanswered = async (jobName: string) => {
      sent.push(jobName);
      throw new ApiError('DOCEX_NETWORK', 'POST /jobs/payload-word: aborted', {
        method: 'POST',
        route: '/jobs/payload-word',
      });
    };
    await expect(sendOnce(world.ctx, runtime, fresh, unanswered)).rejects.toThrow('aborted');

    // The service may still hold the request: a lookup finding nothing 59 s later proves nothing.
    world.clock.advance(59_000);
    const early = await sendOnce(world.ctx, runtime, fresh, async () => 'sent').catch((err: unknown) => err);
    expect(isDocexError(early, 'DOCEX_CREATE_UNSETTLED')).toBe(true);
    expect(sent).toHaveLength(1);

    world.clock.advance(1_000);
    expect(await sendOnce(world.ctx, runtime, fresh, async (name) => sent.push(name))).toMatchObject({
      kind: 'sent',
    });
    expect(sent).toEqual([fresh.jobName, fresh.jobName]);
    expect(lookups).toEqual(['iterate', 'iterate']);
  });

  it('looks up and sends again at once after a create the service answered with an error', async () => {
    const { world, runtime, itemId } = await setUp();
    world.ctx.unansweredSettleMs = 60_000;
    const fresh = await recordIntent(world.ctx, itemId);
    const answered503 = async () => {
      throw new ApiError('DOCEX_API_503', 'POST /jobs/payload-word answered 503', {
        method: 'POST',
        route: '/jobs/payload-word',
        status: 503,
      });
    };
    await expect(sendOnce(world.ctx, runtime, fresh, answered503)).rejects.toThrow('503');
    expect(await sendOnce(world.ctx, runtime, fresh, async () => 'sent')).toMatchObject({ kind: 'sent' });
  });

  it('does not send a create whose turn in the pace came with less than createMarginMs of its lease allowance left: it fails as a wait and the next try, with a fresh lease, sends', async () => {
    const { world, runtime, itemId, lookups } = await setUp();
    const pace = new HostPace(world.clock, new Pacing({ concurrency: 'auto' }), silentLogger(), {
      maxSleepMs: 2,
    });
    world.ctx.pace = pace;
    world.ctx.createMarginMs = 10_000;
    // The lease allowance is counted on the host's monotonic clock: the test moves it.
    let mono = 0;
    world.ctx.monotonicNow = () => mono;
    let leases = 0;
    world.ctx.journal.leaseForSend = async () => {
      leases++;
      return 30_000;
    };
    const sent: string[] = [];
    const send = (jobName: string, allowance: SendAllowance) =>
      withRetry(
        {
          policy: retryPolicy({ random: () => 0 }),
          clock: world.clock,
          log: silentLogger(),
          method: 'POST',
          route: '/jobs/single-file',
          retryable: false,
          signal: allowance.signal,
          ...callOptions(world.ctx, runtime, undefined, allowance),
        },
        async () => sent.push(jobName),
      );
    // A Retry-After of 25 s holds every call to the host.
    (await pace.attempts({ caller: 'intake' }).begin())({ ok: false, status: 429, retryAfterMs: 25_000 });
    const fresh = await recordIntent(world.ctx, itemId);
    const late = sendOnce(world.ctx, runtime, fresh, send).catch((err: unknown) => err);
    await waitFor(() => leases === 1);
    mono += 25_000;
    world.clock.advance(25_000);
    const err = await late;
    // 5 s of the 30 s allowance left: not sent, its place freed, a wait (neither a bug nor maybe sent).
    expect(isDocexError(err, 'DOCEX_PACE_TURN_LATE')).toBe(true);
    expect((err as Error).message).toContain('5000 ms of its lease allowance left, less than the 10000 ms');
    expect(sent).toEqual([]);
    expect(pace.inFlight()).toBe(0);
    expect(classifyFailure(err, 'create')).toMatchObject({ kind: 'retry', code: 'DOCEX_PACE_TURN_LATE' });

    // Tried again: the lease renewed, the lookup finds nothing, a turn with 15 s left sends.
    (await pace.attempts({ caller: 'intake' }).begin())({ ok: false, status: 429, retryAfterMs: 15_000 });
    const again = sendOnce(world.ctx, runtime, fresh, send);
    await waitFor(() => leases === 2);
    mono += 15_000;
    world.clock.advance(15_000);
    expect(await again).toMatchObject({ kind: 'sent' });
    expect(sent).toEqual([fresh.jobName]);
    expect(lookups).toEqual(['iterate']);
  });
});
