/**
 * Several agents polling one SFTP server claim into folders of their own in `.processing/`
 * (source.ts): named after the agent's place (host and state folder), so an agent restarted in
 * the same place finds its files again, and written only with characters every server accepts.
 */
import { createHash } from 'node:crypto';

const PATTERN = /^agent-[0-9a-f]{16}$/;

/** The claim folder of the agent at `place` (host:stateDir). */
export function claimFolderOf(place: string): string {
  return `agent-${createHash('sha256').update(place).digest('hex').slice(0, 16)}`;
}

export function isClaimFolder(name: string): boolean {
  return PATTERN.test(name);
}
