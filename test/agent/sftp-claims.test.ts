/**
 * Which SFTP claim folders an agent may adopt: those whose agents (by place) are all dead or
 * stopped by the agents table; its own folder is named after its place; a failed read of the
 * table is not remembered.
 */
import { expect, it } from 'vitest';
import { sftpClaims } from '../../src/agent/sftp-claims.js';
import type { AgentRecord } from '../../src/journal/index.js';
import { claimFolderOf } from '../../src/sources/sftp/claim-folders.js';

const record = (place: string, status: AgentRecord['status']): AgentRecord =>
  ({ id: `${place}-${status}`, host: 'h', pid: 1, version: '0.1.0', place, status }) as AgentRecord;

it('names its own folder after its place and counts a folder abandoned when no agent of its place is alive', async () => {
  const rows = [
    record('host-a:/state', 'alive'),
    record('host-b:/state', 'dead'),
    record('host-b:/state', 'alive'),
    record('host-c:/state', 'dead'),
    record('host-d:/state', 'stopped'),
  ];
  const claims = sftpClaims('host-a:/state', async () => rows);
  expect(claims.own).toBe(claimFolderOf('host-a:/state'));
  expect(claims.own).toMatch(/^agent-[0-9a-f]{16}$/);
  expect(claims.isClaimFolder(claimFolderOf('anything'))).toBe(true);
  expect(claims.isClaimFolder('.archive')).toBe(false);
  // Another start of host-b is alive: its folder is not abandoned, whatever its earlier starts.
  expect(await claims.abandoned(claimFolderOf('host-b:/state'))).toBe(false);
  expect(await claims.abandoned(claimFolderOf('host-c:/state'))).toBe(true);
  expect(await claims.abandoned(claimFolderOf('host-d:/state'))).toBe(true);
  // No row at all (forgotten after days): nobody claims into it any more.
  expect(await claims.abandoned(claimFolderOf('host-e:/state'))).toBe(true);
});

it('asks the agents table again after a failed read', async () => {
  let calls = 0;
  const claims = sftpClaims('host-a:/state', async () => {
    calls++;
    if (calls === 1) throw new Error('the journal at postgres://db: agents failed');
    return [record('host-c:/state', 'alive')];
  });
  await expect(claims.abandoned(claimFolderOf('host-c:/state'))).rejects.toThrow('agents failed');
  expect(await claims.abandoned(claimFolderOf('host-c:/state'))).toBe(false);
  expect(calls).toBe(2);
});
