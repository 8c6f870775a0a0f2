/**
 * A flaky service: 20% of all requests answered 5xx (500, 502, 503), uploads reset mid-body, and
 * bursts of 429 with Retry-After, through the sandbox's fault injector. Counted in the sandbox.
 */
import { finish, runInWorld, type Scenario, sleep } from '../scenario.js';

export const serviceFaultsScenario: Scenario = {
  name: 'service-faults',
  fault: '20% 5xx, resets mid-upload, 429 bursts',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 150 : 1_000);
    return runInWorld(
      this,
      { name: 'service', files, mode: sizes.mode, agentEntry: sizes.agentEntry, journal: sizes.journal },
      async (world) => {
        const { control } = world;
        // Three rules of about 7% each: together about 20% of requests fail.
        for (const status of [500, 502, 503])
          await control.call('POST', '/faults', { route: '*', errorRate: 0.07, status });
        await control.call('POST', '/faults', { route: '/upload/:jobId', resetMidUploadRate: 0.2 });
        const agent = world.startAgent();
        await Promise.race([agent.started, agent.exited]);
        // Ten bursts, whatever the mode: sets that go one at a time (index-csv) are still being
        // dropped after them, and a burst every second until then would be a service that never
        // answers, not a flaky one.
        let bursts = 0;
        while (bursts < 10 && world.staged() > 0 && agent.child.exitCode === null) {
          world.drop(Math.ceil(files / 10));
          await control.call('POST', '/faults', {
            route: '*',
            burst429: { count: 10, retryAfterSeconds: 1 },
          });
          bursts++;
          await sleep(1_000);
        }
        world.drop();
        await finish(world, 120_000 + files * 300);
        const injected = await world.sandbox.injected();
        await control.call('DELETE', '/faults');
        const total = Object.values(injected).reduce((a, b) => a + b, 0);
        const detail = Object.entries(injected)
          .sort()
          .map(([k, v]) => `${v}× ${k}`)
          .join(', ');
        return { injected: total, injectedDetail: `${detail} (${bursts} bursts of 429)` };
      },
    );
  },
};
