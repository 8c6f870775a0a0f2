/**
 * SFTP folders of agents sharing a journal (source.ts's SharedClaims): this agent claims into the
 * folder of its place, and a claim folder counts as abandoned when no agent of its place is alive
 * by the agents table (a heartbeat within cluster.deadAfterMs, not stopped). The table is read at
 * most once per second, however many folders and servers ask.
 */
import type { AgentRecord } from '../journal/index.js';
import { claimFolderOf, isClaimFolder } from '../sources/sftp/claim-folders.js';
import type { SharedClaims } from '../sources/sftp/source.js';

const READ_EVERY_MS = 1_000;

export function sftpClaims(place: string, agents: () => Promise<AgentRecord[]>): SharedClaims {
  let read: { at: number; live: Promise<Set<string>> } | undefined;
  const liveFolders = (): Promise<Set<string>> => {
    const now = performance.now();
    if (!read || now - read.at >= READ_EVERY_MS) {
      const live = agents().then(
        (rows) => new Set(rows.filter((r) => r.status === 'alive').map((r) => claimFolderOf(r.place))),
      );
      // A failed read is not kept: the next poll asks again.
      live.catch(() => {
        read = undefined;
      });
      read = { at: now, live };
    }
    return read.live;
  };
  return {
    own: claimFolderOf(place),
    isClaimFolder,
    async abandoned(name) {
      return !(await liveFolders()).has(name);
    },
  };
}
