/** Notes on the agent's peak memory for bench/report.ts (issue 18: bounded whatever the backlog). */
export const MEMORY_NOTES = `## Bounded memory (issue 18)
- Peak RSS is VmHWM of the agent process. A file's events are never held whole any more: a
  poll records a job's sending events a page (1,000) at a time as they are listed, each page in a
  store transaction of its own, the job's row last (before: 10,000 events parsed, then their JSON
  and their documents, before one transaction); the status file of a file is streamed from the
  store 500 events at a time, byte for byte the pretty-printed document it was (before: the whole
  document as objects and as a 10+ MB string at every rewrite, which a 10,000-event file gets
  again and again while its proofs arrive); the daily status CSV is streamed the same way.
- Return path after these changes, on Node 24 at load average 10-14 (another engineer's return-path
  run shared the machine; \`npm run bench -- --only return-path --baseline-docs 0 --write --merge\`):
  proofs of 10,000 events peaked at 264.7 MiB (317.2 MiB before, on Node 20), the 10,011 Peppol
  documents at 203.7 MiB (151.8 before, on Node 20). Both are over 150 MB; neither was profiled
  further (the Peppol pass parses each UBL summary on the main thread; a Node 24 run before these
  changes was lost).
- Node 24 holds more than Node 20 at rest (about 125-135 MB against 95-105, see Idle), which every
  peak carries: on Node 24 the 100,000-file backlog peaked at 219.5 MiB (182.2 MiB at the first
  upload) at load average 14, against 150.7 MiB on Node 20 in the table, measured before the
  inspection workers of issue 16 existed. They are the largest part: an experiment inspecting
  2,000 small PDFs through the compiled Inspector in one process (the agent's Node flags, Node 24)
  grew its resident set from 105 to 198 MB with the default two workers, about 45 MB a worker, each
  a V8 isolate with Node's bootstrap and the parsers (pdf-lib) loaded. A smaller young generation
  per worker (4 or 2 MB instead of 16) saved 5-10 MB only. Peaks under 150 MB on Node 24 need the
  workers to cost less (one worker, a lighter worker bundle, or workers stopped when idle), which
  was not done here; burst and the large file were not run again on Node 24.
- Second pass (2026-11-26, Node 24.21.0, load average 12-26 from other engineers' runs):
  - Inspection workers: one costs 44-56 MB (the compiled Inspector alone inspecting 1,500-3,000
    small PDFs, 8 at a time, one worker: 82 → 126-139 MB, flat after the first 500; inside, a
    worker's V8 heap is 28 MB and its external memory 11-13 MB at the burst's peak). A worker left
    idle for 30 s is now ended (started again with the next file). With one worker running, a
    second starts only once a check has waited 1 s for it, counted from when the last worker
    became ready. The burst (1,000 files, two rounds, arms alternated against one warm sandbox):
    - both workers started at once (before): 6.7 and 22.1 files/s, 17.9-21.5 ms of CPU per file,
      peak 206.8 and 214.6 MiB;
    - one worker only (\`inspection.workers: 1\` in a test build): 28.9, 9.9, 35.6, 17.6, 54.5 and
      64.5 files/s in three A/B runs, 12.5-20.9 ms per file, peak 177.0-185.9 MiB;
    - the lazy pool as committed (second worker after a 1 s wait): 44.6 and 81.9 files/s at
      15.4 and 11.8 ms per file against 54.5 and 64.5 for one worker in the same run, peak 177.4
      and 175.8 MiB against 177.0 and 179.0. On two cores a small PDF's check never waits a
      second, so the burst runs on one worker, at no cost in files/s, 35-40 MiB lower.
    - Rules tried before it: "the queue busy for 100 ms" (23.2, 25.8, 25.1 and 14.4 files/s,
      peaks 212.5-216.4 MiB) and "the oldest check waited 1 s from its queueing" (15.6 files/s,
      210.6 MiB) still ran two workers in the burst: the checks queued behind the first worker
      while it started; counting from its readiness removed that.
  - Where a burst's peak was, with two workers (sampled every second inside the agent): V8's
    heap of the main thread stays at 35-42 MB total; the resident set climbs from 130 to 220 MB
    with the anonymous memory outside it (worker isolates, malloc: SQLite pages, TLS, libuv).
    A worker without zod (its payload tasks loaded on first use, the limits' defaults without the
    schema) was 0-8 MB smaller; a worker young generation of 4 MB instead of 16, 5 MB smaller at
    8 % more CPU: neither taken.
  - Return path on Node 24 at 2,000 events and 2,000 Peppol documents (\`benchReturnPath\` driven from
    a script, \`--baseline-docs 0\`, two runs side by side at load average 20-26): 4,000 proofs
    peaked at 175.9 MiB with the flags of before and 175.2 with \`--v8-pool-size=1
    --max-old-space-size=256\` (15.1 and 15.6 proofs/s), 2,011 Peppol documents at 144.3 and
    132.4 MiB (under 150 at this size). The proofs pass was not profiled further in this pass.
  - Backlog on Node 24, 20,000 files (\`benchBacklog\` from a script, the 60 s window, load average
    17-20): peak 200.2 MiB, 180.4 at the first upload (207.2 and 184.6 in a run sampled every
    second), 16.5 files/s; with the lazy pool as committed (load average 5-10): 187.0 MiB, 149.3
    at the first upload, 51.1 files/s. Inside the agent: 59 MB anonymous before the first file, 127 MB three seconds after
    the intake started (two threads more: inspection), then about 1 MB/s more while V8's heap of
    the main thread grows only from 38 to 50 MB total. What the rest is (worker heaps, malloc
    of the libuv threads, SQLite) was not found in this pass.
  - \`MALLOC_ARENA_MAX=2\` in the agent's environment: burst peak 200.5 against 209.6 MiB (one run
    each, side by side); not put in the unit on one run's evidence.
  - Peaks under 150 MB are NOT met on Node 24: the burst 176-177 MiB (from 207-216), the 20,000-file
    backlog 187 MiB (from 200-207), the 2,000-event return path 175 MiB (proofs); the 2,011 Peppol
    documents peaked at 132-144 MiB. The agent at rest already holds about 120 MB on Node 24 (see
    Idle), 44 of it an empty node. The 10,000-event return path and the 100,000-file backlog were
    not run again at full size (their set-up alone took 7 and more minutes at this load).
- Third pass, the return path's proofs (2026-11-26, Node 24.21.0, load average 1-3 with a chaos
  run beside it; \`npm run bench -- --only return-path --return-events N --peppol-docs 10
  --baseline-docs 0\`, the agent's /proc/PID/status read every 1-2 s, its smaps at the peak, and
  \`BENCH_AGENT_NODE_FLAGS=--trace-gc BENCH_AGENT_STDOUT=<file>\`):
  - 10,000 events (20,000 proofs), the follower's defaults: 154.4 proofs/s (129.5 s; 237 s in the
    table's older run), peak 261.7 MiB. 3,000 events: 216-229 MiB in six runs. The peak does not
    grow with the backlog past a few thousand events: anonymous memory climbs from 80 to 160 MB
    in the first 20 s of downloads, then stays.
  - Where it is at the peak (smaps of a 3,000-event run at 232 MB): 110 MB in V8's 256 KiB heap
    pages while the live heap after a full GC is 30-43 MB (--trace-gc: 75-100 MB committed, and
    30-54 MB of freed pages V8 keeps pooled for reuse), 48.5 MB in malloc's main arena (the
    external buffers of streams, TLS and SQLite, freed only when V8 collects their owners), 16 MB
    in thread arenas, 52 MB pages of the node binary.
  - Tried, 3,000 events (peak MiB / proofs/s; the shipped flags gave 216-229 / 111-186):
    \`--heap-growing-percent=20\` 220.8 / 146; \`--initial-old-space-size=16\` 221.1 / 169; both
    224.3 / 154; \`--max-semi-space-size=8\` 263.2 / 175 (a larger young generation is worse);
    \`=2\` 216.4 / 143; \`--no-decommit-pooled-pages\` 222.2 / 144; \`--max-old-space-size=96\`
    200.8 / 127 (an agent that can run out of heap on a large job: not taken); the follower's
    concurrency ceiling 12 instead of 32 (a build with the constant changed): 193.7 / 126. None
    comes near 150 MB; the peak is V8 keeping pages for a heap that grew while 32 downloads were
    in flight, plus malloc's high-water mark.
  - Kept: the follower reads its due documents once per fill, (in flight + free slots) rows
    instead of (2 x limit + in flight) for every task started: the 3,000-event run made 325
    young-generation GCs instead of 420 (a quarter less garbage), at the same peak.
- The 100,000-file backlog on the same tree (Node 24.21.0, load average 0.2-1.5; \`npm run bench --
  --only backlog,idle --write --merge\`, the table): peak 219.3 MiB, 151.9 MiB at the first upload,
  129.8 files/s over the first 60 s. The table's run before it (303.5 files/s, 150.7 MiB) was on
  Node 20 and before the inspection workers of issue 16: the workers and Node 24 are the
  difference, as the passes above measured. Under 150 MB is NOT met here either.
- Fourth pass (2026-11-26, Node 24.21.0, load average 0.2-3, with the idle collector and
  \`--no-memory-reducer\` of the Idle section):
  - glibc's malloc tunables in the agent's environment, 3,000-event return path, arms one after
    the other (peak MiB): none 218.9, 215.5, 219.3, 212.9; \`MALLOC_MMAP_THRESHOLD_=65536
    MALLOC_TRIM_THRESHOLD_=131072\` (buffers of 64 KiB and more mapped and unmapped one by one)
    189.2, 196.1, 225.7; with \`MALLOC_ARENA_MAX=2\` 195.5, and with a 32 KiB threshold 193.8;
    \`MALLOC_TRIM_THRESHOLD_=131072\` alone 206.6, 218.2. About 10-20 MiB less on average, within
    the spread of the runs, and a mapping per 64 KiB chunk would cost every streamed transfer
    page faults: not put in the unit. V8's \`--memory-balancer\` (its newer heap-limit heuristic),
    same runs: 209.6 MiB, with \`--memory-balancer-c-value=3e-9\` 204.8, \`=3e-8\` 212.8, against
    218.8 for the shipped flags beside them: not taken either.
  - What an inspection worker is made of (a process with the agent's flags starting one
    \`Worker\` and reading its own VmRSS once the worker said ready): an empty worker 15.2 MB;
    one that loads pdf-lib 30-30.7 MB; the compiled inspector worker 48.6-48.9 MB; the same worker
    bundled and minified with esbuild 38.0-43.5 MB. Imported alone into a worker, zod adds 12.5 MB
    (it comes in through the inspection limits' schema and the payload JSON schema), node-cron 3
    MB (through the configuration's shared types), papaparse 1 MB. An earlier pass measured a
    worker without zod 0-8 MB smaller at the burst's peak, where parse garbage dominates.
  - The 100,000-file backlog again with these launcher flags (\`npm run bench -- --only backlog
    --write --merge\`, the table; load average 1.2-1.7): peak 213.6 MiB (219.3 before), 152.2 at
    the first upload, 114.2 files/s against 129.8 (the curl baseline beside it also fell, 23 to 17
    files/s: the sandbox's side of the machine was slower in this run).
  - The 10,000-event return path with these flags (\`npm run bench -- --only return-path
    --return-events 10000 --peppol-docs 10 --baseline-docs 0\`, printed, not merged: the table
    keeps the 10,011-document Peppol row): 20,000 proofs in 96.5 s (207.2 proofs/s; 129.5 s in the
    third pass), peak 270.2 MiB (261.7). The burst: see its section.
  - Why 150 MB is out of reach for the backlog and the burst on Node 24: the agent at rest holds
    about 115 MB (Idle), and the first PDF starts an inspection worker of 45-50 MB, so one file
    in flight already passes 150 before any backlog state. The return path (no worker) peaks at
    205-225 MiB for 3,000 events: its live heap is 30-43 MB, and V8 keeps the pages the heap grew
    to while 32 downloads were in flight, plus malloc's high-water mark.
`;
