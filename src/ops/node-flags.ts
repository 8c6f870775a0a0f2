/**
 * The Node flags every shipped launcher starts the agent with (the systemd unit, the container
 * image, `npm start`; the benchmark spawns the agent the same way, and test/ops checks they agree).
 *
 * --max-semi-space-size=4: V8's default young generation is heap the agent reserves but whose
 * objects live microseconds; a smaller one lowers a large upload's peak RSS at no CPU cost per file.
 *
 * --single-threaded-gc: the agent's garbage is mostly the external buffers of streams (SSH
 * packets, upload chunks); V8's GC helper threads for it took the cores the SSH server, the libuv
 * pool and the TLS peer need, and SFTP downloads ran faster without them.
 *
 * --expose-gc: lets a streamed upload ask for a young-generation GC every 16 MiB
 * (src/core/collect.ts), which keeps its resident set lower.
 *
 * --v8-pool-size=1: V8's background threads only compile here, as the GC runs on the main thread;
 * each also holds a malloc arena of its own. One thread lowers an idle agent's resident set and the
 * burst's peak, with no CPU cost per file measurable.
 *
 * --no-memory-reducer: V8's memory reducer ran a full GC 100 s after the last one, up to three
 * times, and again after an idle scavenge, so an idle agent spent most of its CPU there; the
 * agent collects once per quiet spell instead (IdleCollector, src/core/collect.ts).
 *
 * Figures: docs/benchmarks.md#figures-behind-choices-in-the-code and its Idle section.
 */
export const AGENT_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=4',
  '--single-threaded-gc',
  '--expose-gc',
  '--v8-pool-size=1',
  '--no-memory-reducer',
];
