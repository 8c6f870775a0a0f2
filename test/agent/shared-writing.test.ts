/**
 * Which agents' temp names a write on a shared output folder removes: those of agents dead by the
 * agents table, not running again at their place, not this agent, and dead less than a shared
 * folder's sweep waits; this agent's own temp names are placeWriter's of its state folder.
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { sharedWriting } from '../../src/agent/shared-writing.js';
import { placeWriter, writerOfPlace } from '../../src/core/temp-name.js';
import { type AgentRecord, agentIdentity } from '../../src/journal/index.js';
import { SHARED_TEMP_STALE_MS } from '../../src/outputs/local-target.js';

const record = (place: string, status: AgentRecord['status'], seenAgoMs = 5_000): AgentRecord =>
  ({
    id: `${place}-${status}`,
    host: 'h',
    pid: 1,
    version: '0.1.0',
    place,
    status,
    seenAgoMs,
  }) as AgentRecord;

it('writes under the temp names placeWriter gives its state folder', () => {
  const stateDir = path.resolve('var', 'state');
  const self = agentIdentity(stateDir);
  expect(sharedWriting(self, async () => []).writer).toBe(placeWriter(stateDir));
  expect(writerOfPlace('host-b:/srv/docex:odd')).not.toBe(writerOfPlace('host-b:/srv/docex'));
});

it('removes the temp names of dead agents only: not running again at their place, not its own, not stopped, not dead past the sweep', async () => {
  const self = { ...agentIdentity('/state'), place: 'host-a:/state' };
  const rows = [
    record('host-a:/state', 'alive'),
    record('host-a:/state', 'dead'),
    record('host-b:/state', 'dead'),
    record('host-b:/state', 'alive'),
    record('host-c:/state', 'dead'),
    record('host-c:/state', 'dead'),
    record('host-d:/state', 'stopped'),
    record('host-e:/state', 'dead', SHARED_TEMP_STALE_MS + 1),
  ];
  expect(await sharedWriting(self, async () => rows).deadWriters()).toEqual([writerOfPlace('host-c:/state')]);
});

it('asks the agents table again after a failed read', async () => {
  let calls = 0;
  const shared = sharedWriting({ ...agentIdentity('/state'), place: 'host-a:/state' }, async () => {
    calls++;
    if (calls === 1) throw new Error('the journal at postgres://db: agents failed');
    return [record('host-c:/state', 'dead')];
  });
  await expect(shared.deadWriters()).rejects.toThrow('agents failed');
  expect(await shared.deadWriters()).toEqual([writerOfPlace('host-c:/state')]);
  expect(calls).toBe(2);
});
