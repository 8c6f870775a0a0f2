/**
 * Remote operations that take more than one SFTP request: rename with its server differences,
 * mkdir -p, and the atomic upload (temp name, fsync where offered, rename into place).
 */
import path from 'node:path/posix';
import type { Readable } from 'node:stream';
import { DocexError } from '../core/errors.js';
import { tempBaseName } from '../core/temp-name.js';
import { SFTP_STATUS, sftpOpError, sftpStatus } from './errors.js';
import type { SftpSession } from './session.js';
import type { UploadContent, UploadOptions } from './types.js';

/**
 * SFTP v3 RENAME: never replaces an existing file (OpenSSH refuses, like link(2)).
 * - target exists → DOCEX_SFTP_TARGET_EXISTS
 * - source missing, or the target's folder → DOCEX_SFTP_NOT_FOUND
 * - the server refuses renames (unsupported, denied, or a bare failure while both paths are fine)
 *   → DOCEX_SFTP_RENAME_REFUSED
 */
export async function renameNoReplace(session: SftpSession, from: string, to: string): Promise<void> {
  const server = session.description;
  try {
    await session.rawRename(from, to);
    return;
  } catch (err) {
    const status = sftpStatus(err);
    if (status === undefined) throw sftpOpError('rename', from, server, err);
    if (status === SFTP_STATUS.NO_SUCH_FILE && (await session.stat(from)) === undefined) {
      throw sftpOpError('rename', from, server, err);
    }
    // The target's folder went (an emptied claim folder removed meanwhile): no refusal of renames.
    if (status === SFTP_STATUS.NO_SUCH_FILE && (await session.stat(path.dirname(to))) === undefined) {
      throw sftpOpError('rename', to, server, err);
    }
    if ((await session.stat(to)) !== undefined) {
      throw new DocexError('DOCEX_SFTP_TARGET_EXISTS', `rename ${from} → ${to} on ${server}: target exists`, {
        cause: err,
        details: { op: 'rename', remotePath: from, to, server, status },
      });
    }
    if ((await session.stat(from)) === undefined) throw sftpOpError('rename', from, server, err);
    throw new DocexError(
      'DOCEX_SFTP_RENAME_REFUSED',
      `${server} refused to rename ${from} → ${to} (${(err as Error).message})`,
      { cause: err, details: { op: 'rename', remotePath: from, to, server, status } },
    );
  }
}

/** Rename that replaces `to`: atomic with posix-rename@openssh.com, else remove + rename. */
export async function renameReplace(session: SftpSession, from: string, to: string): Promise<void> {
  if (session.hasPosixRename) {
    try {
      await session.rawPosixRename(from, to);
      return;
    } catch (err) {
      if (sftpStatus(err) === undefined) throw sftpOpError('rename', from, session.description, err);
      // fall through: the plain rename tells the reasons apart
    }
  }
  try {
    await renameNoReplace(session, from, to);
  } catch (err) {
    if (!(err instanceof DocexError) || err.code !== 'DOCEX_SFTP_TARGET_EXISTS') throw err;
    // Without posix-rename the old file goes first: readers see no file for a moment, never a partial one.
    await session.rawUnlink(to).catch((e: unknown) => {
      throw sftpOpError('remove', to, session.description, e);
    });
    await renameNoReplace(session, from, to);
  }
}

/** mkdir -p: walks down from the first missing ancestor; a folder made meanwhile is fine. */
export async function mkdirp(session: SftpSession, dir: string): Promise<void> {
  const missing: string[] = [];
  let current = path.normalize(dir);
  while (current !== '/' && current !== '.') {
    const entry = await session.stat(current);
    if (entry?.type === 'dir') break;
    if (entry) {
      throw new DocexError('DOCEX_SFTP_IO', `${current} on ${session.description} is not a folder`, {
        details: { op: 'mkdir', remotePath: current, server: session.description },
      });
    }
    missing.unshift(current);
    current = path.dirname(current);
  }
  for (const folder of missing) {
    try {
      await session.rawMkdir(folder);
    } catch (err) {
      if (sftpStatus(err) !== undefined && (await session.stat(folder))?.type === 'dir') continue;
      throw sftpOpError('mkdir', folder, session.description, err);
    }
  }
}

function open(session: SftpSession, file: string, flags: 'w' | 'wx'): Promise<Buffer> {
  return session.request<Buffer>((done) => session.sftp.open(file, flags, { mode: 0o640 }, done));
}

function writeAt(session: SftpSession, handle: Buffer, data: Buffer, position: number): Promise<void> {
  return session.request<void>((done) =>
    session.sftp.write(handle, data, 0, data.length, position, (err) => done(err, undefined)),
  );
}

async function* chunksOf(content: UploadContent): AsyncGenerator<Buffer> {
  if (typeof content === 'function') {
    const stream: Readable = content();
    for await (const chunk of stream) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    return;
  }
  yield typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
}

const WRITE_CHUNK = 256 * 1024;
const WRITES_IN_FLIGHT = 8;

/** Writes the content to `file` (created or truncated), fsyncs where offered, closes. */
export async function writeRemoteFile(
  session: SftpSession,
  file: string,
  content: UploadContent,
): Promise<number> {
  const handle = await open(session, file, 'w');
  let position = 0;
  try {
    const pending = new Set<Promise<void>>();
    for await (const chunk of chunksOf(content)) {
      for (let offset = 0; offset < chunk.length; offset += WRITE_CHUNK) {
        const piece = chunk.subarray(offset, offset + WRITE_CHUNK);
        const write = writeAt(session, handle, piece, position).finally(() => pending.delete(write));
        pending.add(write);
        position += piece.length;
        if (pending.size >= WRITES_IN_FLIGHT) await Promise.race(pending);
      }
    }
    await Promise.all(pending);
    const extensions = (session.sftp as unknown as { _extensions?: Record<string, string> })._extensions;
    if (extensions?.['fsync@openssh.com'] === '1') {
      await session.request<void>((done) =>
        session.sftp.ext_openssh_fsync(handle, (err) => done(err, undefined)),
      );
    }
  } finally {
    await session.closeHandle(handle);
  }
  return position;
}

/**
 * The same for every attempt at one target by one writer: a crash's leftover is overwritten by
 * the next write (of that writer; another process's leftover waits for the folder's retention).
 */
export function tempNameFor(remotePath: string, tempDir?: string, writer?: string): string {
  return path.join(tempDir ?? path.dirname(remotePath), tempBaseName(remotePath, 'tmp', writer));
}

/** Temp name, write, fsync, rename over the target. A failure removes the temp file. */
export async function uploadAtomicOn(
  session: SftpSession,
  content: UploadContent,
  remotePath: string,
  options: UploadOptions = {},
): Promise<void> {
  if (options.inPlace) {
    try {
      await writeRemoteFile(session, remotePath, content);
      return;
    } catch (err) {
      throw sftpOpError('upload', remotePath, session.description, err);
    }
  }
  const temp = tempNameFor(remotePath, options.tempDir, options.writer);
  try {
    await writeRemoteFile(session, temp, content);
    await renameReplace(session, temp, remotePath);
  } catch (err) {
    if (session.closed) throw sftpOpError('upload', remotePath, session.description, err);
    await session.rawUnlink(temp).catch(() => undefined);
    if (err instanceof DocexError || sftpStatus(err) !== undefined) {
      throw sftpOpError('upload', remotePath, session.description, err);
    }
    // The connection is fine: the content itself failed (a local stream error).
    throw new DocexError(
      'DOCEX_SFTP_IO',
      `upload ${remotePath} to ${session.description} failed: ${(err as Error).message}`,
      {
        cause: err,
        details: { op: 'upload', remotePath, server: session.description },
      },
    );
  }
  // Best effort: a temp file left is only untidy.
  for (const writer of options.removeWriters ?? []) {
    await session.rawUnlink(tempNameFor(remotePath, options.tempDir, writer)).catch(() => undefined);
  }
}
