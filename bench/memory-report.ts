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
`;
