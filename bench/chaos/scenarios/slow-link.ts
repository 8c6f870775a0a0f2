/**
 * A slow, stalling, dropping link: TCP fault proxies in front of the API host and the files host
 * (the pre-signed URLs name the proxy: the sandbox child rewrites its public files origin). Latency
 * and a bandwidth cap all along, some upload connections reset after a few KiB, and stalls, some
 * longer than the agent's HTTP time-outs.
 */
import { finish, rng, runInWorld, type Scenario, sleep, within } from '../scenario.js';

export const slowLinkScenario: Scenario = {
  name: 'slow-link',
  fault: 'slow, stalling link; resets after N bytes',
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 60 : 300);
    const random = rng(sizes.seed + 4);
    return runInWorld(
      this,
      {
        name: 'link',
        mode: sizes.mode,
        agentEntry: sizes.agentEntry,
        journal: sizes.journal,
        files,
        padBytes: 48 * 1024,
        proxies: { api: true, files: true },
        timeouts: { headersMs: '5s', bodyMs: '5s' },
      },
      async (world) => {
        const { api, files: filesHost } = world.proxies;
        const link = { latencyMs: 40, bytesPerSecond: 256 * 1024 };
        api!.set(link);
        filesHost!.set({ ...link, resetAfterBytes: 24 * 1024, resetShare: 0.25 });
        const agent = world.startAgent();
        await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
        let stalls = 0;
        while (world.placed() < files && agent.child.exitCode === null) {
          world.drop(Math.ceil(files / 5));
          await sleep(1_000 + Math.floor(random() * 1_500));
          // A stall of 2 s slows; one of 7 s outlasts the 5 s time-outs and forces retries.
          const stallMs = stalls % 2 === 0 ? 2_000 : 7_000;
          for (const proxy of [api!, filesHost!]) proxy.set({ ...proxy.faults, stall: true });
          stalls++;
          await sleep(stallMs);
          for (const proxy of [api!, filesHost!]) proxy.set({ ...proxy.faults, stall: false });
          if (stalls >= (sizes.quick ? 2 : 6)) break;
        }
        world.drop();
        await finish(world, 180_000 + files * 500);
        const resets = filesHost!.counters.resets + api!.counters.resets;
        const held = filesHost!.counters.stalled + api!.counters.stalled;
        return {
          injected: resets + stalls,
          injectedDetail: `${resets} connection resets, ${stalls} stalls (${held} connections held), ${link.latencyMs} ms latency, ${link.bytesPerSecond / 1024} KiB/s`,
        };
      },
    );
  },
};
