/**
 * Output folders of agents sharing a journal (outputs/types.ts's SharedWriting): this agent writes
 * through temp names of its place, and knows the places of agents that died from the agents table
 * (dead: no heartbeat within cluster.deadAfterMs and no goodbye), so a write of a target removes
 * the temp file a dead agent's cut write of it left. The table is read at most once per second.
 */

import { writerOfPlace } from '../core/temp-name.js';
import type { AgentIdentity, AgentRecord } from '../journal/index.js';
import { SHARED_TEMP_STALE_MS } from '../outputs/local-target.js';
import type { SharedWriting } from '../outputs/types.js';

const READ_EVERY_MS = 1_000;

export function sharedWriting(self: AgentIdentity, agents: () => Promise<AgentRecord[]>): SharedWriting {
  let read: { at: number; dead: Promise<string[]> } | undefined;
  return {
    writer: writerOfPlace(self.place),
    deadWriters() {
      const now = performance.now();
      if (!read || now - read.at >= READ_EVERY_MS) {
        const dead = agents().then((rows) => deadWriters(self.place, rows));
        // A failed read is not kept: the next write asks again.
        dead.catch(() => {
          read = undefined;
        });
        read = { at: now, dead };
      }
      return read.dead;
    },
  };
}

/**
 * The writers of the dead agents' places, but for places an agent runs at again (same temp names:
 * its writes are in flight) and this agent's own. Agents dead longer than a shared folder's sweep
 * waits (SHARED_TEMP_STALE_MS) are left to it.
 */
function deadWriters(ownPlace: string, rows: readonly AgentRecord[]): string[] {
  const running = new Set(rows.filter((r) => r.status === 'alive').map((r) => r.place));
  running.add(ownPlace);
  const places = rows
    .filter((r) => r.status === 'dead' && r.place !== '' && r.seenAgoMs < SHARED_TEMP_STALE_MS)
    .map((r) => r.place)
    .filter((place) => !running.has(place));
  return [...new Set(places)].map(writerOfPlace);
}
