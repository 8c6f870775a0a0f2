/**
 * The send gate reads freshness from the item in hand: the item recordIntent answered is sent
 * without a lookup, once; the same intent read back from the journal is looked up first.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/index.js';
import { isDocexError } from '../../src/core/errors.js';
import type { Job } from '../../src/domain/wire.js';
import { recordIntent, sendOnce } from '../../src/pipeline/send-gate.js';
import type { PipelineJobs } from '../../src/pipeline/types.js';
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
});
