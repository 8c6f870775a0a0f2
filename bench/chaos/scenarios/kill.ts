/**
 * The agent SIGKILLed at random moments: files arrive in batches, each agent process is killed a
 * random time after it started, and a last one runs to the end. Affected: the distinct files in
 * `.processing/` (claimed, not placed) at the moment of some kill.
 */
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';

export const killScenario: Scenario = {
  name: 'kill',
  fault: 'agent SIGKILLed at random moments',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 150 : 1_000);
    const kills = sizes.kills ?? (sizes.quick ? 5 : 20);
    const random = rng(sizes.seed);
    return runInWorld(
      this,
      { name: 'kill', files, mode: sizes.mode, agentEntry: sizes.agentEntry, journal: sizes.journal },
      async (world) => {
        const batch = Math.ceil(files / (kills + 1));
        world.drop(batch);
        const inFlight = new Set<string>();
        for (let k = 0; k < kills; k++) {
          const agent = world.startAgent();
          await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
          world.drop(batch);
          // Some kills land right after the start (recovery, claims), most in the middle of uploads.
          await sleep(Math.floor(random() * 1_200));
          for (const name of world.inFlight()) inFlight.add(name);
          agent.child.kill('SIGKILL');
          await agent.exited;
        }
        world.drop();
        const last = world.startAgent();
        await within(Promise.race([last.started, last.exited]), 60_000, 'agent start');
        await finish(world, 120_000 + files * 200);
        return { injected: kills, injectedDetail: `${kills} SIGKILL`, affected: inFlight.size };
      },
    );
  },
};
