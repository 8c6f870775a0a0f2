/**
 * The journal's PostgreSQL server restarted under the agent (PostgreSQL journal only): the sets
 * arrive in batches, one more than the faults; once 20–80 % of a batch is placed (a moment by
 * progress: it lands mid-run on a slow machine too) the next batch is dropped and the server is
 * hit, so the agent has files in flight and new ones to claim: `pg_ctl restart -m fast` (every
 * session ended, the server back a moment later), and once an immediate shutdown (a crash as the
 * agent sees it) that lasts until the agent's /readyz names the journal as not answering, then a
 * start. The agent must pause intake, keep its work, resume by itself and end with every document
 * sent once. Affected: files named in a warning of the agent.
 */
import { JOURNAL_DOWN } from '../processes.js';
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';
import { batchedMoments, nextLine, outageCounts, placedSets, readyzNamesJournal } from './pg-faults.js';

export const pgRestartScenario: Scenario = {
  name: 'pg-restart',
  fault: 'PostgreSQL restarted (pg_ctl restart; once killed, then started)',
  journals: ['postgres'],
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 600);
    const faults = Math.max(1, sizes.faults ?? (sizes.quick ? 3 : 8));
    const random = rng(sizes.seed + 13);
    const killAt = Math.floor(random() * faults);
    return runInWorld(
      this,
      { name: 'pgrestart', files, mode: sizes.mode, agentEntry: sizes.agentEntry, journal: 'postgres' },
      async (world) => {
        const pg = world.postgres!;
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        const { batch, moments } = batchedMoments(random, faults, world.sets.length);
        const notes: string[] = [];
        let readyzSeen = 0;
        world.drop(batch);
        for (const [i, sets] of moments.entries()) {
          await placedSets(world, sets);
          await sleep(Math.floor(random() * 400));
          const at = world.placed();
          if (i !== killAt) {
            const t = Date.now();
            // The next batch arrives with the fault: files to claim while the server is away.
            world.drop(batch);
            await pg.restart();
            notes.push(`restart at ${at} files placed (${Date.now() - t} ms)`);
            continue;
          }
          // The agent notices at its next statement: an outage line, and /readyz names the journal.
          const t = Date.now();
          const noticed = nextLine(world, JOURNAL_DOWN, 20_000);
          await pg.kill();
          world.drop(batch);
          const readyz = await readyzNamesJournal(world, 20_000);
          if (readyz.named) readyzSeen++;
          const logged = await noticed;
          await sleep(Math.floor(random() * 1_500));
          await pg.start();
          notes.push(
            `immediate shutdown at ${at} files placed, down ${Date.now() - t} ms (outage logged: ${logged ? 'yes' : 'no'}; /readyz named the journal: ${readyz.named ? 'yes' : `no (${readyz.body.slice(0, 120)})`})`,
          );
        }
        world.drop();
        await finish(world, 120_000 + files * 200);
        const outages = outageCounts(world);
        return {
          injected: faults,
          injectedDetail: `${notes.join('; ')}; the agent logged ${outages.down} outages and ${outages.back} resumptions, ${outages.idleLost} idle connections lost${readyzSeen === 0 ? '; /readyz never named the journal' : ''}`,
        };
      },
    );
  },
};
