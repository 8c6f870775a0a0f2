/**
 * Lost answers, the fault that tests exactly once: the sandbox does the work (creates the job,
 * stores the upload) and cuts the connection before its answer, for a share of every create and
 * upload; and the agent is SIGKILLed now and then on top. Every document must still end with
 * exactly one job. Injected: answers dropped (counted in the sandbox) and kills.
 */
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';

const CREATES = ['/jobs/single-file', '/jobs/payload-pdf', '/jobs/payload-word'];

export const lostAnswersScenario: Scenario = {
  name: 'lost-answers',
  fault: '30% of create and upload answers lost, SIGKILLs',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 100 : 600);
    const kills = sizes.kills ?? (sizes.quick ? 2 : 6);
    const random = rng(sizes.seed);
    const world = {
      name: 'lost',
      files,
      mode: sizes.mode,
      agentEntry: sizes.agentEntry,
      journal: sizes.journal,
    };
    return runInWorld(this, world, async (world) => {
      const { control } = world;
      for (const route of CREATES) {
        await control.call('POST', '/faults', { route, method: 'POST', dropAnswerRate: 0.3 });
      }
      await control.call('POST', '/faults', { route: '/upload/:jobId', method: 'PUT', dropAnswerRate: 0.3 });
      const batch = Math.ceil(files / (kills + 1));
      for (let k = 0; k < kills; k++) {
        world.drop(batch);
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        await sleep(300 + Math.floor(random() * 1_500));
        agent.child.kill('SIGKILL');
        await agent.exited;
      }
      world.drop();
      const last = world.startAgent();
      await within(Promise.race([last.started, last.exited]), 60_000, 'agent start');
      await finish(world, 120_000 + files * 300);
      const state = (await control.call('GET', '/state')) as { answersDropped: number };
      await control.call('DELETE', '/faults');
      return {
        injected: state.answersDropped + kills,
        injectedDetail: `${state.answersDropped} answers lost, ${kills} SIGKILL`,
      };
    });
  },
};
