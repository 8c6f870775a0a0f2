/** SFTP status codes and transport failures mapped to the agent's stable error codes. */
import { DocexError } from '../core/errors.js';

/** SSH_FX_* status codes (SFTP v3). */
export const SFTP_STATUS = {
  EOF: 1,
  NO_SUCH_FILE: 2,
  PERMISSION_DENIED: 3,
  FAILURE: 4,
  OP_UNSUPPORTED: 8,
} as const;

export function sftpStatus(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** An SFTP operation failure with a stable code; a failure without a status means the connection broke. */
export function sftpOpError(op: string, remotePath: string, server: string, err: unknown): DocexError {
  if (err instanceof DocexError) return err;
  const status = sftpStatus(err);
  const details = { op, remotePath, server, ...(status !== undefined ? { status } : {}) };
  const reason = err instanceof Error ? err.message : String(err);
  switch (status) {
    case SFTP_STATUS.NO_SUCH_FILE:
      return new DocexError('DOCEX_SFTP_NOT_FOUND', `${op} ${remotePath} on ${server}: no such file`, {
        cause: err,
        details,
      });
    case SFTP_STATUS.PERMISSION_DENIED:
      return new DocexError('DOCEX_SFTP_PERMISSION', `${op} ${remotePath} on ${server}: permission denied`, {
        cause: err,
        details,
      });
    case undefined:
      return new DocexError(
        'DOCEX_SFTP_CONNECT',
        `${op} ${remotePath} on ${server}: connection lost (${reason})`,
        {
          cause: err,
          details,
        },
      );
    default:
      return new DocexError('DOCEX_SFTP_IO', `${op} ${remotePath} on ${server} failed: ${reason}`, {
        cause: err,
        details,
      });
  }
}
