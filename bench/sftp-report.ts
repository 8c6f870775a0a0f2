/** The SFTP scenario's rows, targets and notes for bench/report.ts (issue 4). */
import type { SftpBenchResult } from './sftp.js';

type Outcome = SftpBenchResult | { error: string } | undefined;
const isError = (r: Outcome): r is { error: string } => r !== undefined && 'error' in r;

export function sftpRows(r: Outcome): string[][] {
  if (r === undefined) return [];
  if (isError(r)) return [['sftp', 'failed', r.error, '', '', '']];
  const name = `sftp download ${(r.bytes / 1024 / 1024).toFixed(0)} MiB (median of ${r.rounds})`;
  const list = `sftp list ${r.listFiles} files`;
  return [
    [
      name,
      `agent (${r.transfers} connections)`,
      `${r.agentMiBps} MiB/s`,
      `${r.agentMs}`,
      '',
      `${r.ratio}× sftp (target ≥ 1.0×)`,
    ],
    [name, 'agent, 1 connection', `${r.agentOneConnectionMiBps} MiB/s`, `${r.agentOneConnectionMs}`, '', ''],
    [
      name,
      'OpenSSH sftp -b',
      `${r.opensshMiBps} MiB/s`,
      `${r.opensshMs}`,
      '',
      `connect ${r.opensshConnectMs} ms, flush after ${r.opensshFlushMs} ms; agent ${r.ratioTransferOnly}× its transfer alone, ${r.ratioBothOnDisk}× with its flush`,
    ],
    [name, 'ssh2-sftp-client get (defaults)', `${r.plainGetMiBps} MiB/s`, `${r.plainGetMs}`, '', 'once'],
    [list, 'one listing', '', `${r.listMs}`, '', 'read in batches through a handle'],
    [
      list,
      'two listings + settle check',
      `${r.ready} ready`,
      `${r.listSettleMs}`,
      '',
      'settle wait not counted',
    ],
  ];
}

export function sftpTargets(r: Outcome): string[] {
  if (r === undefined || isError(r)) return [];
  const mark = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `SFTP download ≥ 1.0× OpenSSH sftp: ${r.ratio}× (${r.ratioTransferOnly}× against its transfer alone; ${r.ratioBothOnDisk}× once OpenSSH's copy is flushed to disk too), sizes ${r.sizesVerified ? 'verified' : 'WRONG'} — ${mark(r.ratio >= 1 && r.sizesVerified)}.`,
    `SFTP list + settle of ${r.listFiles} files: ${r.listSettleMs} ms, ${r.ready} ready.`,
  ];
}

export const SFTP_NOTES = `## SFTP (issue 4)
- A real OpenSSH sshd on 127.0.0.1 (internal-sftp), started for the run; the file is random data
  read from the page cache. Rounds alternate OpenSSH \`sftp -b\` (a new process and connection each
  time, as a script would run it) and the agent's transport with its connections already open (as
  between polls). OpenSSH's connect + login alone is measured separately and shown.
- Where ssh2-sftp-client's plain \`get\` loses its time: it streams with one 64 KiB READ in flight,
  so every chunk waits a full request/response turn through both SSH stacks. OpenSSH keeps 64
  requests in flight. The agent keeps 16 READs of 255 KiB (OpenSSH's largest) in flight per
  connection (a slot is free again as soon as its answer is in; the disk writes run beside, at
  their offsets, in reused buffers), keeps the SSH channel window at 16 MiB (ssh2's 2 MiB, refilled
  below 1 MiB, stalls the server whenever the agent is not scheduled for a moment: about 1.3× on
  this loaded machine), splits a large file over the free transfer connections, which also
  spreads the server's encryption over more sshd processes, and starts an fdatasync every 16 MiB
  written, so the disk writes while the network delivers. The agent's copy is durable (fsynced)
  when its download returns; OpenSSH's \`sftp\` never fsyncs, and the \`sync\` after it shows what
  flushing its copy costs. Columns are separated by a \`sync\`, outside the timings: without it
  the writeback of the file \`sftp\` left dirty fell into the next column (a 0.6–0.7× artefact in
  the agent's first column of earlier runs). Every session sets TCP_NODELAY: on Node 24 a small
  request otherwise waited 40 ms for the server's delayed ACK (Nagle).
- Where the time goes: per 500 MiB the agent's transport spent ~2.2 s of CPU with V8's default
  GC (its main thread 1.2–1.5 s: decryption and ssh2's packet handling; V8's GC helper threads
  0.7–1.0 s, because ssh2 allocates a buffer for every socket read, for every SSH packet that spans
  two reads and for every 255 KiB READ answer it reassembles; 0.2 s of writes), the sshd ~1.1 s,
  on two cores. ssh2 caps SSH packets at 35,000 bytes, so larger packets, which would cut that
  garbage, are not possible without patching it. With the agent's \`--single-threaded-gc\`
  (src/ops/node-flags.ts) the helper threads stop competing with the sshd: 309–351 MiB/s against
  250–292 MiB/s without it (flags flipped between runs). This scenario therefore runs in a node
  process started with the agent's flags.
- One connection or three: in the A/B runs with synced columns one connection was as fast as
  three or faster on loopback (the split adds sshd processes on the same two cores); the split is
  kept for remote servers, where one connection's 4 MiB of requests in flight bounds it by the
  round trip.
`;
