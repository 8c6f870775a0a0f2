/**
 * The Node flags every shipped launcher starts the agent with (the systemd unit, the container
 * image, `npm start`; the benchmark spawns the agent the same way, and test/ops checks they agree).
 *
 * --max-semi-space-size=4: V8 grows each young-generation semi-space to 16 MiB by default, heap
 * the agent reserves but whose objects live microseconds (its working set is ~25 MiB). At 4 MiB
 * the 1 GiB upload's peak RSS drops by about 20 MiB (heap total 58 → 33 MiB) with no measurable
 * CPU cost per file in the 2,000-file burst (docs/benchmarks.md).
 *
 * --single-threaded-gc: the agent's live heap is ~25-35 MiB, and its garbage is mostly the
 * external buffers of streams (SSH packets, upload chunks), which start a full GC every few tens
 * of MiB. V8's helper threads for those GCs took 0.7-1.0 s of CPU per 500 MiB SFTP download, on
 * cores the SSH server, the libuv pool and the TLS peer need. Done on the main thread, the 500 MiB
 * download ran 309-351 MiB/s against 250-292 (same sshd, one process each, in alternation); the
 * 1 GiB upload and the 2,000-file burst did not get slower.
 *
 * --expose-gc: lets a streamed upload ask for a young-generation GC every 16 MiB
 * (src/core/collect.ts), which keeps the 1 GiB upload's resident set 20–25 MiB lower.
 *
 * --v8-pool-size=1: V8's background threads (4 by default) only compile here, as the GC runs on the
 * main thread; each thread also holds a malloc arena of its own. One thread: an idle agent's
 * resident set 10 MB lower on Node 24 (117-122 against 128-133 MB), the burst's peak 12 MiB lower,
 * with no CPU cost per file measurable in the burst (docs/benchmarks.md, Idle).
 */
export const AGENT_NODE_FLAGS: readonly string[] = [
  '--max-semi-space-size=4',
  '--single-threaded-gc',
  '--expose-gc',
  '--v8-pool-size=1',
];
