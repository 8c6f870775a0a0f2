/**
 * The token endpoint down: a TCP fault proxy in front of the auth host resets every connection
 * while the sandbox clock moves past the token's lifetime, so the agent's next calls answer 401
 * and a new token cannot be had until the endpoint is back. Files keep arriving meanwhile.
 */
import { TOKEN_LIFETIME_SECONDS } from '../../../src/sandbox/auth.js';
import { finish, runInWorld, type Scenario, sleep, within } from '../scenario.js';

export const tokenDownScenario: Scenario = {
  name: 'token-down',
  fault: 'token endpoint down',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 600);
    const outageMs = sizes.outageMs ?? (sizes.quick ? 8_000 : 60_000);
    return runInWorld(
      this,
      {
        name: 'token',
        files,
        mode: sizes.mode,
        agentEntry: sizes.agentEntry,
        journal: sizes.journal,
        proxies: { auth: true },
      },
      async (world) => {
        const auth = world.proxies.auth!;
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        world.drop(Math.ceil(files / 3));
        // A first sixth of the sets placed (waitPlaced also drops the sets that go one at a time).
        await world.waitPlaced(60_000, Math.ceil(files / 6));
        // Down: new connections reset, and the agent's kept-alive one with them.
        auth.set({ refuse: true });
        auth.resetAll();
        // Every token the agent holds is now expired in the service's eyes.
        await world.control.call('POST', '/clock/advance', { ms: (TOKEN_LIFETIME_SECONDS + 60) * 1000 });
        const until = Date.now() + outageMs;
        const steps = 4;
        for (let i = 0; i < steps && world.staged() > 0; i++) {
          world.drop(Math.ceil((files * 2) / 3 / steps));
          await sleep(Math.max(0, Math.min(outageMs / steps, until - Date.now())));
        }
        await sleep(Math.max(0, until - Date.now()));
        const during = world.placed();
        auth.set({});
        world.drop();
        await finish(world, 120_000 + files * 200);
        return {
          injected: auth.counters.refused,
          injectedDetail: `${auth.counters.refused} token connections reset over ${Math.round(outageMs / 1000)} s (${during} files placed by its end)`,
        };
      },
    );
  },
};
