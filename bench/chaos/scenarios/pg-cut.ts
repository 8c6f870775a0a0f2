/**
 * The agent's connection to its PostgreSQL journal cut and restored (PostgreSQL journal only): the
 * agent's journal.url names a TCP fault proxy in front of the server; the sets arrive in batches,
 * one more than the faults, and once 20–80 % of a batch is placed the next batch is dropped and the
 * proxy
 * - resets every open connection (a blip: new ones go through at once),
 * - goes down: resets them and refuses new ones for 1–4 s,
 * - stalls every byte for longer than the agent's statement timer (journal.timeoutMs 3 s, the
 *   client's timer 2 s later), then resets the connections: answers, COMMIT's included, never come,
 * - stalls as long, then lets the held bytes through late.
 * The server itself stays up: what it committed stays committed, whether or not the agent heard.
 * Affected: files named in a warning of the agent.
 */
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';
import { batchedMoments, outageCounts, placedSets } from './pg-faults.js';

const KINDS = ['reset', 'down', 'stall-cut', 'stall-release'] as const;
type Kind = (typeof KINDS)[number];

/** The agent's journal.timeoutMs here: a stall has to outlast it (plus the client's 2 s grace). */
const TIMEOUT_MS = 3_000;

export const pgCutScenario: Scenario = {
  name: 'pg-cut',
  fault: 'connection to PostgreSQL cut and restored (TCP proxy)',
  journals: ['postgres'],
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 600);
    const faults = Math.max(1, sizes.faults ?? (sizes.quick ? 4 : 12));
    const random = rng(sizes.seed + 17);
    // Every kind once before any twice, in a random order.
    const kinds: Kind[] = [];
    while (kinds.length < faults) {
      const round = [...KINDS].sort(() => random() - 0.5);
      kinds.push(...round.slice(0, faults - kinds.length));
    }
    return runInWorld(
      this,
      {
        name: 'pgcut',
        files,
        mode: sizes.mode,
        agentEntry: sizes.agentEntry,
        journal: 'postgres',
        journalProxy: true,
        journalTimeout: `${TIMEOUT_MS}ms`,
      },
      async (world) => {
        const proxy = world.proxies.journal!;
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        const { batch, moments } = batchedMoments(random, faults, world.sets.length);
        const counts = new Map<Kind, number>();
        world.drop(batch);
        for (const [i, sets] of moments.entries()) {
          await placedSets(world, sets);
          await sleep(Math.floor(random() * 400));
          const kind = kinds[i]!;
          counts.set(kind, (counts.get(kind) ?? 0) + 1);
          if (kind === 'reset') {
            // The next batch arrives with each cut: files to claim while the link is broken.
            world.drop(batch);
            proxy.resetAll();
          } else if (kind === 'down') {
            proxy.set({ refuse: true });
            proxy.resetAll();
            world.drop(batch);
            await sleep(1_000 + Math.floor(random() * 3_000));
            proxy.set({});
          } else {
            proxy.set({ stall: true });
            world.drop(batch);
            await sleep(TIMEOUT_MS + 2_000 + 1_000 + Math.floor(random() * 2_000));
            if (kind === 'stall-cut') proxy.resetAll();
            proxy.set({});
          }
        }
        world.drop();
        await finish(world, 120_000 + files * 200);
        const outages = outageCounts(world);
        const done = KINDS.filter((k) => counts.has(k)).map((k) => `${counts.get(k)}× ${k}`);
        return {
          injected: faults,
          injectedDetail: `${done.join(', ')}; proxy: ${proxy.counters.resets} connections reset, ${proxy.counters.refused} refused, ${proxy.counters.stalled} stalled, of ${proxy.counters.connections}; the agent logged ${outages.down} outages and ${outages.back} resumptions, ${outages.idleLost} idle connections lost`,
        };
      },
    );
  },
};
