/**
 * The Node flags every shipped launcher starts the agent with (the systemd unit, the container
 * image, `npm start`; the benchmark spawns the agent the same way, and test/ops checks they agree).
 *
 * --max-semi-space-size=4: V8 grows each young-generation semi-space to 16 MiB by default, heap
 * the agent reserves but whose objects live microseconds (its working set is ~25 MiB). At 4 MiB
 * the 1 GiB upload's peak RSS drops by about 20 MiB (heap total 58 → 33 MiB) with no measurable
 * CPU cost per file in the 2,000-file burst (docs/benchmarks.md).
 */
export const AGENT_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
