/**
 * The clock jumping across the 2-hour upload window: uploads are held by the sandbox (latency on
 * the upload route) while its clock moves 2 h 1 min ahead, so their pre-signed URLs expire under
 * them and every job created before the jump is past its window. The agent must recreate those
 * jobs and upload each file once. Affected: the files whose job was created again.
 */
import { finish, runInWorld, type Scenario, sleep, within } from '../scenario.js';
import type { World } from '../world.js';

const JUMP_MS = 2 * 3_600_000 + 60_000;

/**
 * Resolves once the sandbox holds `count` jobs waiting for their file that were not there before
 * (`before`: ids of earlier jobs; an expired job stays "awaiting" in the sandbox).
 */
async function awaiting(world: World, before: Set<string>, count: number, uploads: boolean): Promise<void> {
  for (;;) {
    const jobs = (await world.control.call('GET', '/jobs')) as { items: { id: string; status: string }[] };
    // A payload-word job has no upload: the jump then lands among creates.
    const fresh = jobs.items.filter(
      (j) => (!uploads || j.status === 'AWAITING_FILE_UPLOAD') && !before.has(j.id),
    );
    if (fresh.length >= count) return;
    await sleep(100);
  }
}

export const clockJumpScenario: Scenario = {
  name: 'clock-jump',
  fault: 'clock jumps across the 2-hour window',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 80 : 400);
    const jumps = sizes.quick ? 2 : 4;
    // Many uploads in flight at once, so each jump catches many files mid-window.
    const concurrency = 12;
    const uploads = sizes.mode?.folder['mode'] !== 'payload-word';
    // A mode whose sets are dropped one at a time has one set's documents in flight.
    const wanted = sizes.mode?.oneSetAtATime ? 1 : concurrency / 2;
    return runInWorld(
      this,
      {
        name: 'clock',
        files,
        mode: sizes.mode,
        agentEntry: sizes.agentEntry,
        journal: sizes.journal,
        concurrency,
      },
      async (world) => {
        const { control } = world;
        await control.call('POST', '/faults', { route: '/upload/:jobId', latencyMs: 1_500 });
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        for (let j = 0; j < jumps; j++) {
          // Jobs are created and their uploads are waiting in the sandbox when the clock jumps.
          const before = new Set((await control.jobs()).map((job) => job.id));
          world.drop(Math.ceil(files / jumps));
          await within(awaiting(world, before, wanted, uploads), 30_000, 'new jobs awaiting their upload');
          await control.call('POST', '/clock/advance', { ms: JUMP_MS });
          await sleep(1_000);
        }
        await control.call('DELETE', '/faults');
        world.drop();
        await finish(world, 120_000 + files * 200);
        const recreated = new Set(world.agents.flatMap((a) => [...a.recreated]));
        return {
          injected: jumps,
          injectedDetail: `${jumps} jumps of 2 h 1 min; ${recreated.size} jobs recreated after their window expired`,
          affected: recreated.size,
        };
      },
    );
  },
};
