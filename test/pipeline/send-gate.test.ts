/**
 * The send gate reads freshness from the item in hand: the item recordIntent answered is sent
 * without a lookup, once; the same intent read back from the journal is looked up first.
 */
import { afterEach, describe, expect, it } from 'vitest';
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
});
