/**
 * The small version the test suite runs (test/chaos/chaos-run.test.ts): one world, every kind of
 * fault at once at a low dose — 5xx and a 429 burst from the sandbox, upload connections reset by
 * the TCP proxy in front of the files host, and the agent SIGKILLed once in the middle.
 */
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';

export const mixedScenario: Scenario = {
  name: 'mixed',
  fault: '5xx + 429 + link resets + one SIGKILL',
  run(sizes) {
    const files = sizes.files ?? 24;
    const random = rng(sizes.seed + 7);
    return runInWorld(
      this,
      {
        name: 'mixed',
        files,
        mode: sizes.mode,
        agentEntry: sizes.agentEntry,
        journal: sizes.journal,
        proxies: { files: true },
      },
      async (world) => {
        const { control } = world;
        await control.call('POST', '/faults', { route: '*', errorRate: 0.1, status: 503 });
        await control.call('POST', '/faults', { route: '*', burst429: { count: 5, retryAfterSeconds: 1 } });
        world.proxies.files!.set({ resetAfterBytes: 600, resetShare: 0.2 });
        world.drop(Math.ceil(files / 2));
        const first = world.startAgent();
        await within(Promise.race([first.started, first.exited]), 60_000, 'agent start');
        await within(
          (async () => {
            while (world.placed() < Math.ceil(files / 6)) await sleep(50);
          })(),
          60_000,
          'the first files archived',
        );
        world.drop();
        await sleep(Math.floor(random() * 300));
        const inFlight = world.inFlight().length;
        first.child.kill('SIGKILL');
        await first.exited;
        const last = world.startAgent();
        await within(Promise.race([last.started, last.exited]), 60_000, 'agent start');
        await finish(world, 60_000);
        const injected = await world.sandbox.injected();
        const resets = world.proxies.files!.counters.resets;
        const total = Object.values(injected).reduce((a, b) => a + b, 0) + resets + 1;
        const detail = Object.entries(injected)
          .sort()
          .map(([k, v]) => `${v}× ${k}`)
          .join(', ');
        return {
          injected: total,
          injectedDetail: `1 SIGKILL (${inFlight} files in flight), ${resets} link resets, ${detail}`,
        };
      },
    );
  },
};
