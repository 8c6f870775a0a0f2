/**
 * An SFTP server built on ssh2's `Server`, over real temp-dir paths (no chroot: remote paths are the
 * absolute local ones), with knobs for the ways real servers misbehave: a connection dropped in the
 * middle of a download, slow reads, RENAME refused, permission denied on open, a changed host key
 * (restart with a new key on the same port), a file that grows between listings, names in a
 * listing that no file system holds, a folder the server fails to list.
 * Password authentication (user `docex`, password `fault-secret`).
 */
import { promises as fsp } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import ssh2, { type Attributes, type Connection, type FileEntry, type Server, type SFTPWrapper } from 'ssh2';
import { fingerprintOfPublicKeyLine } from './sshd.js';

// ssh2 is CommonJS: its named exports are not visible to ESM imports.
const { utils } = ssh2;
const { OPEN_MODE, STATUS_CODE } = utils.sftp;

export const FAULT_USER = 'docex';
export const FAULT_PASSWORD = 'fault-secret';

export interface FaultKnobs {
  /** The connection serving a read is dropped after this many bytes of file data (`disconnectTimes` times, default once). */
  disconnectAfterBytes?: number;
  disconnectTimes?: number;
  /** Every READ answered this much later. */
  readDelayMs?: number;
  /** RENAME answers "operation unsupported"/permission denied. */
  refuseRename?: boolean;
  /** Opening files of these names (in any folder) for reading answers PERMISSION_DENIED. */
  denyOpen?: Set<string>;
  /** The connection is dropped instead of opening a file of this name for reading, this many times. */
  dropOnOpen?: Map<string, number>;
  /** Once: the connection is dropped instead of answering a RENAME whose target contains this text. */
  dropOnRenameTo?: string;
  /** Each listing (OPENDIR) of the file's folder appends `chunk` to it, `times` times. */
  grow?: Map<string, { times: number; chunk: Buffer }>;
  /** Names listed as folders in a folder's listing besides its own entries: names no file system holds (`../x`, a NUL). */
  listAlso?: Map<string, readonly string[]>;
  /** Listing (OPENDIR) these folders (absolute paths) answers SSH_FX_FAILURE: the server's own failure. */
  failListing?: Set<string>;
}

export interface FaultServer {
  host: string;
  port: number;
  username: string;
  password: string;
  /** `SHA256:…` of the current host key. */
  fingerprint: string;
  knobs: FaultKnobs;
  /** Counters: bytes served, renames refused, connections accepted, dropped, folder listings. */
  stats: {
    bytesRead: number;
    renamesRefused: number;
    connections: number;
    disconnects: number;
    listings: number;
  };
  /** Re-listen on the same port; `newHostKey` swaps the host key (a "changed host key"). */
  restart(options?: { newHostKey?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

function statusOf(err: unknown): number {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return STATUS_CODE.NO_SUCH_FILE;
  if (code === 'EACCES' || code === 'EPERM') return STATUS_CODE.PERMISSION_DENIED;
  return STATUS_CODE.FAILURE;
}

function attrsOf(st: import('node:fs').Stats): Attributes {
  return {
    mode: st.mode,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    atime: Math.floor(st.atimeMs / 1000),
    mtime: Math.floor(st.mtimeMs / 1000),
  };
}

function openFlags(flags: number): string {
  const read = (flags & OPEN_MODE.READ) !== 0;
  const write = (flags & OPEN_MODE.WRITE) !== 0;
  if (!write) return 'r';
  const create = (flags & OPEN_MODE.CREAT) !== 0;
  const trunc = (flags & OPEN_MODE.TRUNC) !== 0;
  const excl = (flags & OPEN_MODE.EXCL) !== 0;
  const append = (flags & OPEN_MODE.APPEND) !== 0;
  if (append) return read ? 'a+' : 'a';
  if (excl) return read ? 'wx+' : 'wx';
  if (trunc || create) return read ? 'w+' : 'w';
  return 'r+';
}

type Handle =
  | { kind: 'file'; fh: fsp.FileHandle; path: string }
  | { kind: 'dir'; entries: FileEntry[] | undefined; path: string };

function serveSftp(sftp: SFTPWrapper, client: Connection, server: FaultServer): void {
  const handles = new Map<number, Handle>();
  let next = 0;
  const newHandle = (h: Handle): Buffer => {
    const id = next++;
    handles.set(id, h);
    const buf = Buffer.alloc(4);
    buf.writeUInt32BE(id, 0);
    return buf;
  };
  const handleOf = (buf: Buffer): [number, Handle | undefined] => {
    const id = buf.length === 4 ? buf.readUInt32BE(0) : -1;
    return [id, handles.get(id)];
  };
  const run = (reqid: number, fn: () => Promise<void>) => {
    fn().catch((err) => sftp.status(reqid, statusOf(err), (err as Error).message));
  };
  const { knobs } = server;
  let served = 0;

  sftp.on('OPEN', (reqid, filename, flags) =>
    run(reqid, async () => {
      const mode = openFlags(flags);
      if (mode === 'r' && knobs.denyOpen?.has(path.basename(filename))) {
        sftp.status(reqid, STATUS_CODE.PERMISSION_DENIED, 'permission denied');
        return;
      }
      const drops = knobs.dropOnOpen?.get(path.basename(filename)) ?? 0;
      if (mode === 'r' && drops > 0) {
        knobs.dropOnOpen?.set(path.basename(filename), drops - 1);
        server.stats.disconnects++;
        client.end();
        return;
      }
      const fh = await fsp.open(filename, mode, 0o644);
      sftp.handle(reqid, newHandle({ kind: 'file', fh, path: filename }));
    }),
  );
  sftp.on('READ', (reqid, handle, offset, length) =>
    run(reqid, async () => {
      const [, h] = handleOf(handle);
      if (h?.kind !== 'file') return void sftp.status(reqid, STATUS_CODE.FAILURE);
      if (knobs.readDelayMs) await new Promise((r) => setTimeout(r, knobs.readDelayMs));
      const buf = Buffer.alloc(length);
      const { bytesRead } = await h.fh.read(buf, 0, length, offset);
      if (bytesRead === 0) return void sftp.status(reqid, STATUS_CODE.EOF);
      server.stats.bytesRead += bytesRead;
      if (knobs.disconnectAfterBytes !== undefined) {
        served += bytesRead;
        if (served >= knobs.disconnectAfterBytes) {
          served = 0;
          knobs.disconnectTimes = (knobs.disconnectTimes ?? 1) - 1;
          if (knobs.disconnectTimes <= 0) delete knobs.disconnectAfterBytes;
          server.stats.disconnects++;
          client.end();
          return;
        }
      }
      sftp.data(reqid, buf.subarray(0, bytesRead));
    }),
  );
  sftp.on('WRITE', (reqid, handle, offset, data) =>
    run(reqid, async () => {
      const [, h] = handleOf(handle);
      if (h?.kind !== 'file') return void sftp.status(reqid, STATUS_CODE.FAILURE);
      await h.fh.write(data, 0, data.length, offset);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('FSTAT', (reqid, handle) =>
    run(reqid, async () => {
      const [, h] = handleOf(handle);
      if (h?.kind !== 'file') return void sftp.status(reqid, STATUS_CODE.FAILURE);
      sftp.attrs(reqid, attrsOf(await h.fh.stat()));
    }),
  );
  sftp.on('FSETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on('SETSTAT', (reqid) => sftp.status(reqid, STATUS_CODE.OK));
  sftp.on('CLOSE', (reqid, handle) =>
    run(reqid, async () => {
      const [id, h] = handleOf(handle);
      if (!h) return void sftp.status(reqid, STATUS_CODE.FAILURE);
      handles.delete(id);
      if (h.kind === 'file') await h.fh.close();
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('OPENDIR', (reqid, dir) =>
    run(reqid, async () => {
      if (knobs.failListing?.has(path.resolve(dir)))
        return void sftp.status(reqid, STATUS_CODE.FAILURE, 'the server failed to list it');
      const st = await fsp.stat(dir);
      if (!st.isDirectory()) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'not a directory');
      server.stats.listings++;
      for (const [file, g] of knobs.grow ?? []) {
        if (path.dirname(file) !== path.resolve(dir) || g.times <= 0) continue;
        g.times--;
        await fsp.appendFile(file, g.chunk);
      }
      sftp.handle(reqid, newHandle({ kind: 'dir', entries: undefined, path: dir }));
    }),
  );
  sftp.on('READDIR', (reqid, handle) =>
    run(reqid, async () => {
      const [, h] = handleOf(handle);
      if (h?.kind !== 'dir') return void sftp.status(reqid, STATUS_CODE.FAILURE);
      if (h.entries === undefined) {
        h.entries = [];
        for (const name of await fsp.readdir(h.path)) {
          const st = await fsp.lstat(path.join(h.path, name)).catch(() => undefined);
          if (st) h.entries.push({ filename: name, longname: name, attrs: attrsOf(st) });
        }
        const dirAttrs = attrsOf(await fsp.stat(h.path));
        for (const name of knobs.listAlso?.get(path.resolve(h.path)) ?? []) {
          h.entries.push({ filename: name, longname: name, attrs: dirAttrs });
        }
      }
      const batch = h.entries.splice(0, 100);
      if (batch.length === 0) return void sftp.status(reqid, STATUS_CODE.EOF);
      sftp.name(reqid, batch);
    }),
  );
  const onStat = (reqid: number, p: string, follow: boolean) =>
    run(reqid, async () => {
      sftp.attrs(reqid, attrsOf(follow ? await fsp.stat(p) : await fsp.lstat(p)));
    });
  sftp.on('STAT', (reqid, p) => onStat(reqid, p, true));
  sftp.on('LSTAT', (reqid, p) => onStat(reqid, p, false));
  sftp.on('REALPATH', (reqid, p) => {
    const resolved = path.posix.resolve('/', p === '.' || p === '' ? '/' : p);
    sftp.name(reqid, [{ filename: resolved, longname: resolved, attrs: {} as FileEntry['attrs'] }]);
  });
  sftp.on('MKDIR', (reqid, p) =>
    run(reqid, async () => {
      await fsp.mkdir(p);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('RMDIR', (reqid, p) =>
    run(reqid, async () => {
      await fsp.rmdir(p);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('REMOVE', (reqid, p) =>
    run(reqid, async () => {
      await fsp.unlink(p);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('RENAME', (reqid, from, to) =>
    run(reqid, async () => {
      if (knobs.dropOnRenameTo !== undefined && to.includes(knobs.dropOnRenameTo)) {
        delete knobs.dropOnRenameTo;
        server.stats.disconnects++;
        client.end();
        return;
      }
      if (knobs.refuseRename) {
        server.stats.renamesRefused++;
        sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED, 'rename not allowed on this server');
        return;
      }
      // SFTP v3 semantics (as OpenSSH's sftp-server): never replace an existing target.
      const exists = await fsp.lstat(to).then(
        () => true,
        () => false,
      );
      if (exists) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'target exists');
      await fsp.rename(from, to);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('close', () => {
    for (const h of handles.values()) if (h.kind === 'file') void h.fh.close().catch(() => {});
    handles.clear();
  });
}

/**
 * ssh2's ed25519 key generation strips leading zero bytes of the public key, so about one pair in
 * 256 cannot be parsed back (mscdex/ssh2#1390, #1513); draw again until both halves parse.
 */
export function newHostKey(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.private) instanceof Error) && !(utils.parseKey(pair.public) instanceof Error))
      return pair;
  }
}

export async function startFaultServer(knobs: FaultKnobs = {}): Promise<FaultServer> {
  let hostKey = newHostKey();
  let listener: Server | undefined;
  const clients = new Set<Connection>();
  const state: FaultServer = {
    host: '127.0.0.1',
    port: 0,
    username: FAULT_USER,
    password: FAULT_PASSWORD,
    fingerprint: fingerprintOfPublicKeyLine(hostKey.public),
    knobs,
    stats: { bytesRead: 0, renamesRefused: 0, connections: 0, disconnects: 0, listings: 0 },
    restart: async (options = {}) => {
      await close();
      if (options.newHostKey) {
        hostKey = newHostKey();
        state.fingerprint = fingerprintOfPublicKeyLine(hostKey.public);
      }
      await listen(state.port);
    },
    stop: () => close(),
  };

  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const srv = new ssh2.Server({ hostKeys: [hostKey.private] }, (client) => {
        state.stats.connections++;
        // ssh2's server-side Connection has setNoDelay at run time; @types/ssh2 lists it only on Client.
        (client as unknown as { setNoDelay(noDelay: boolean): void }).setNoDelay(true);
        clients.add(client);
        client.on('close', () => clients.delete(client));
        client.on('error', () => {});
        client.on('authentication', (ctx) => {
          if (ctx.method === 'password' && ctx.username === FAULT_USER && ctx.password === FAULT_PASSWORD) {
            ctx.accept();
          } else ctx.reject(['password']);
        });
        client.on('ready', () => {
          client.on('session', (accept) => {
            const session = accept();
            session.on('sftp', (acceptSftp) => serveSftp(acceptSftp(), client, state));
          });
        });
      });
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', () => {
        state.port = (srv.address() as AddressInfo).port;
        listener = srv;
        resolve();
      });
    });

  const close = async () => {
    const srv = listener;
    listener = undefined;
    for (const c of clients) c.end();
    clients.clear();
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  };

  await listen(0);
  return state;
}
