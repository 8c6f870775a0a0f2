/**
 * Notes on a recursive folder's watches for bench/report.ts (issue 31): measured by hand with
 * bench/recursive-watch.ts, which is not part of `npm run bench` (it needs no sandbox).
 */
export const RECURSIVE_NOTES = `## Recursive folders (10,000 sub-folders)
\`npx tsx bench/recursive-watch.ts 10000\` (and \`--no-watch\`, \`--limit=5000\`): a recursive local
folder (depth 2) over a tree of 100 company folders of 100 sub-folders each, 10,100 folders,
empty; a LocalSource with its watch on, in a tsx process. Measured 2026-11-28 on the machine above
(Node v24.21.0, ext4, kernel 6.18, fs.inotify.max_user_watches 192,536) while other engineers ran
tests on its two cores (load average 7 – 9): the spread between runs is the machine's load and the
garbage collector's timing more than the agent.

| | start(): scan, list and watch | RSS after start (baseline) | one rescan of the tree | inotify watches |
|---|---|---|---|---|
| watched (3 runs) | 2.1 – 5.0 s | 180 – 206 MB (82 – 100 MB) | 1.8 – 4.6 s | 10,101 |
| not watched (\`--no-watch\`, 5 runs) | 1.1 – 3.1 s | 131 – 175 MB (82 – 98 MB) | 1.1 – 3.1 s | 0 |
| limit at 5,000 (\`--limit=5000\`, 2 runs) | 5.4 – 7.1 s | 186 – 188 MB (82 MB) | 3.9 – 4.2 s | 5,000 |

- One inotify watch per folder: the drop folder and each sub-folder within the depth (10,000 +
  100 + 1). A file written into a sub-folder made after start was noticed in 2 – 5 ms (its
  folder's creation asks for a scan, which lists and watches it).
- Listing the tree grew the resident set by 33 – 93 MB without watches and by 81 – 114 MB with
  them: the 10,101 watches (an FSWatcher and its handle each) cost the process some tens of MB, a
  few KB per watch, less than the noise lets one say more precisely. The kernel's own cost, about
  1 KiB per watch on 64-bit (inotify(7)), is not in these figures.
- A rescan of the whole tree (every minute, the safety net for lost events) took 1 – 4.6 s here;
  a tree much larger belongs in several folders.
- At the limit (ENOSPC from fs.watch, simulated past the 5,000th watch): one warning
  \`DOCEX_SOURCE_WATCH_LIMIT\` naming 5,000 folders watched, no crash; a file in a new sub-folder of
  the watched drop folder was still noticed in 3 – 76 ms, and the files of unwatched folders wait
  for the next rescan.
`;
