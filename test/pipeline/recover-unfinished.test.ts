/**
 * Recovery alone, on a real journal and real `.processing/` folders: what a crash left is handed
 * back (accept, resume) or placed, and nothing else. The scheduler is replaced by recorders.
 */
import { existsSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntakeFile } from '../../src/pipeline/intake.js';
import { recoverUnfinished } from '../../src/pipeline/recovery.js';
import { listFiles } from './support/agent-harness.js';
import { makePartWorld, type PartWorld } from './support/step-context.js';

const worlds: PartWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

function setUp(folders = ['pdf']) {
  const world = makePartWorld(folders);
  worlds.push(world);
  const accepted: Array<[string, IntakeFile]> = [];
  const resumed: Array<[number, boolean]> = [];
  const recover = (only?: string) =>
    recoverUnfinished(
      {
        ctx: world.ctx,
        folders: world.folders,
        accept: (folder, file) => accepted.push([folder, file]),
        resume: (item, rehash) => resumed.push([item.id, rehash]),
      },
      only,
    );
  return { world, accepted, resumed, recover };
}

describe('recoverUnfinished', () => {
  it('takes back, under its drop path, a file moved into .processing whose claim was never recorded', async () => {
    const { world, accepted, resumed, recover } = setUp();
    const claimedPath = world.putClaimed('pdf', 'lost.pdf', 'moved in, then the agent died');
    expect(await recover()).toEqual({
      resumed: 0,
      reclaimed: 1,
      placed: 0,
      skipped: 0,
      quarantined: 0,
      takenOver: 0,
    });
    expect(accepted).toEqual([
      ['pdf', { name: 'lost.pdf', originalPath: path.join(world.dir, 'pdf', 'lost.pdf'), claimedPath }],
    ]);
    expect(resumed).toEqual([]);
  });

  it('does not also resume the item a reclaimed file became while recovery still ran (one actor per item)', async () => {
    const world = makePartWorld(['pdf']);
    worlds.push(world);
    const resumed: number[] = [];
    const claimedPath = world.putClaimed('pdf', 'fast.pdf', 'taken again at once');
    // An intake as fast as the journal answers: the reclaimed file is an item before the plan is read.
    const summary = await recoverUnfinished({
      ctx: world.ctx,
      folders: world.folders,
      accept: (_folder, file) => void world.recordClaim('pdf', file.claimedPath),
      resume: (item) => resumed.push(item.id),
    });
    expect(summary).toMatchObject({ reclaimed: 1, resumed: 0 });
    expect(resumed).toEqual([]);
    expect((await world.journal.byPath(claimedPath)).map((i) => i.state)).toEqual(['claimed']);
  });

  it('takes a file again when the newest item of its path is done, or recorded other content', async () => {
    const { world, accepted, recover } = setUp();
    const done = world.putClaimed('pdf', 'done.pdf', 'sent and archived before');
    const doneItem = await world.recordClaim('pdf', done);
    await world.journal.transition(doneItem.id, 'validated');
    await world.journal.transition(doneItem.id, 'creating');
    await world.journal.transition(doneItem.id, 'created', {
      jobId: 'job_1',
      uploadUrl: 'https://files.invalid/u?sig=s',
      uploadDeadline: world.clock.now() + 3_600_000,
    });
    await world.journal.transition(doneItem.id, 'uploaded', { md5: 'm' });
    await world.journal.transition(doneItem.id, 'done');
    const other = world.putClaimed('pdf', 'other.pdf', 'first content');
    await world.recordClaim('pdf', other);
    utimesSync(other, new Date(1_000), new Date(1_000));
    const summary = await recover();
    expect(accepted.map(([, file]) => file.name).sort()).toEqual(['done.pdf', 'other.pdf']);
    expect(summary).toMatchObject({ reclaimed: 2, placed: 0 });
  });

  it('places a rejected file whose move to the error folder a crash cut short', async () => {
    const { world, accepted, recover } = setUp();
    const claimedPath = world.putClaimed('pdf', 'refused.pdf', 'not a PDF');
    const item = await world.recordClaim('pdf', claimedPath);
    await world.journal.transition(item.id, 'rejected', {
      code: 'DOCEX_INPUT_TYPE_MISMATCH',
      reason: 'not a PDF',
    });
    expect(await recover()).toMatchObject({ placed: 1, reclaimed: 0 });
    expect(existsSync(claimedPath)).toBe(false);
    expect(listFiles(world.folders.get('pdf')!.config.errorDir)).toContain('refused.pdf');
    expect(accepted).toEqual([]);
  });

  it('leaves a file its unfinished item stands for to that item, resumed with its file checked first', async () => {
    const { world, accepted, resumed, recover } = setUp();
    const claimedPath = world.putClaimed('pdf', 'claimed.pdf', 'claimed, not validated');
    const item = await world.recordClaim('pdf', claimedPath);
    expect(await recover()).toMatchObject({ resumed: 1, reclaimed: 0 });
    expect(accepted).toEqual([]);
    expect(resumed).toEqual([[item.id, true]]);
  });

  it('resumes items soonest upload deadline first, only the folder asked for, and skips folders not running', async () => {
    const { world, resumed, recover } = setUp(['a', 'b']);
    const now = world.clock.now();
    const created = async (folder: string, name: string, minutesLeft: number) => {
      const item = await world.recordClaim(folder, world.putClaimed(folder, name, `${folder}/${name}`));
      await world.journal.transition(item.id, 'validated');
      await world.journal.transition(item.id, 'creating');
      await world.journal.transition(item.id, 'created', {
        jobId: `job_${name}`,
        uploadUrl: 'https://files.invalid/u?sig=s',
        uploadDeadline: now + minutesLeft * 60_000,
      });
      return item.id;
    };
    const late = await created('a', 'late.pdf', 50);
    const soon = await created('a', 'soon.pdf', 10);
    const other = await created('b', 'other.pdf', 5);
    expect(await recover('a')).toMatchObject({ resumed: 2, skipped: 0 });
    expect(resumed).toEqual([
      [soon, false],
      [late, false],
    ]);
    world.folders.delete('b');
    resumed.length = 0;
    expect(await recover()).toMatchObject({ resumed: 2, skipped: 1 });
    expect(resumed.map(([id]) => id)).not.toContain(other);
  });
});
