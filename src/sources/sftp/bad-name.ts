/**
 * Remote names that are not UTF-8. ssh2 decodes every name of a listing as UTF-8, so a name written
 * in another encoding (Latin-1 by an old ERP) arrives with U+FFFD for its bad bytes, and no request
 * can reach the file: a rename or open sends the U+FFFD's own bytes. Such a file is left where it
 * is and reported with reason files in the remote error folder; renaming it on the server fixes it.
 * (A name with a genuine U+FFFD round-trips: the caller tells the two apart with a stat.)
 */
import type { RemoteSideFile } from './remote-finalize.js';

export const BAD_NAME_CODE = 'DOCEX_INPUT_BAD_NAME';

/** Whether a listed name may have lost bytes in decoding. */
export function mayBeUndecodable(name: string): boolean {
  return name.includes('\uFFFD');
}

export function badNameReason(remoteDir: string): string {
  return `its name on the SFTP server is not valid UTF-8 (shown with U+FFFD for the bad bytes), so no SFTP request can open or move it; it stays in ${remoteDir}. Rename it there (plain ASCII is safest) and it is taken on the next poll.`;
}

/** `<name>.error.json` and `<name>.error.txt`, as beside a rejected file. */
export function badNameFiles(name: string, folder: string, remoteDir: string, now: number): RemoteSideFile[] {
  const reason = badNameReason(remoteDir);
  const record = {
    status: 'not-taken',
    file: name,
    folder,
    code: BAD_NAME_CODE,
    reason,
    seenAt: new Date(now).toISOString(),
  };
  const text = [
    `${name} was not taken.`,
    '',
    `Reason: ${reason}`,
    `Code:   ${BAD_NAME_CODE}`,
    `Folder: ${folder}`,
    `Seen at: ${record.seenAt}`,
  ].join('\n');
  return [
    { suffix: '.error.json', content: `${JSON.stringify(record, null, 2)}\n` },
    { suffix: '.error.txt', content: `${text}\n` },
  ];
}
