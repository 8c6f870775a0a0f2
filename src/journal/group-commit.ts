import { type FileHandle, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Group commit for a SQLite database in WAL mode whose transactions commit with
 * synchronous=NORMAL: `flush()` resolves once every transaction counted so far is on disk, and
 * callers that arrive while an fsync runs share the next one. The fsync runs on the libuv pool,
 * so the event loop never waits for the disk.
 */
export class GroupCommit {
  private committed = 0;
  private durableUpTo = 0;
  private syncing: Promise<void> | undefined;
  private wal: { handle: FileHandle; ino: number } | undefined;

  constructor(private readonly dbFile: string) {}

  /** A transaction was committed; `durable`: with synchronous=FULL (it and all before it are on disk). */
  committedOne(durable: boolean): void {
    this.committed++;
    if (durable) this.durableUpTo = this.committed;
  }

  async flush(): Promise<void> {
    const target = this.committed;
    while (this.durableUpTo < target) {
      if (this.syncing) {
        await this.syncing;
        continue;
      }
      const upTo = this.committed;
      this.syncing = this.syncWal()
        .then(() => {
          this.durableUpTo = Math.max(this.durableUpTo, upTo);
        })
        .finally(() => {
          this.syncing = undefined;
        });
      await this.syncing;
    }
  }

  close(): void {
    void this.wal?.handle.close().catch(() => undefined);
    this.wal = undefined;
  }

  /**
   * fsync of the WAL file: what a synchronous=FULL commit does, for every commit so far at once
   * (frames already checkpointed were synced into the database file by the checkpoint). A new WAL
   * file (first use, or recreated) also gets its directory entry synced, as SQLite does.
   */
  private async syncWal(): Promise<void> {
    const walFile = `${this.dbFile}-wal`;
    const onDisk = await stat(walFile);
    if (this.wal?.ino !== onDisk.ino) {
      await this.wal?.handle.close().catch(() => undefined);
      this.wal = { handle: await open(walFile, 'r'), ino: onDisk.ino };
      const dir = await open(dirname(this.dbFile), 'r');
      await dir.sync().finally(() => dir.close());
    }
    await this.wal.handle.sync();
  }
}
