/**
 * Retention of the archive and error folders: files whose modification time is older than their
 * folder's `retention` are removed, then the sub-folders (archive days) they leave empty. Runs a
 * minute after start and then every 6 hours (an unref'd timer: no wake-ups worth counting); each
 * pass logs one line per folder that removed something, and the totals are served as metrics.
 */
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

export interface RetentionPlace {
  folder: string;
  /** `archive` or `error`. */
  place: string;
  dir: string;
  retentionMs: number;
}

export interface HousekeepingOptions {
  places: () => RetentionPlace[];
  clock: Clock;
  log: Logger;
  firstRunMs?: number;
  intervalMs?: number;
}

const FIRST_RUN_MS = 60_000;
const INTERVAL_MS = 6 * 3_600_000;

export class Housekeeping {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Files removed since start, by `folder/place`. */
  private readonly removedCounts = new Map<string, { folder: string; place: string; files: number }>();

  constructor(private readonly options: HousekeepingOptions) {}

  start(): void {
    const every = this.options.intervalMs ?? INTERVAL_MS;
    const run = () => {
      void this.runOnce();
      this.timer = setTimeout(run, every).unref();
    };
    this.timer = setTimeout(run, this.options.firstRunMs ?? FIRST_RUN_MS).unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  removed(): { folder: string; place: string; files: number }[] {
    return [...this.removedCounts.values()];
  }

  /** One pass over every place; passes never overlap. */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<void> {
    for (const place of this.options.places()) {
      const cutoff = this.options.clock.now() - place.retentionMs;
      const tally = { files: 0, bytes: 0 };
      try {
        await this.sweep(place.dir, cutoff, tally, true);
      } catch (err) {
        this.options.log.warn(
          { folder: place.folder, place: place.place, dir: place.dir, err },
          'retention pass failed',
        );
      }
      if (tally.files === 0) continue;
      const key = `${place.folder}/${place.place}`;
      const counted = this.removedCounts.get(key) ?? { folder: place.folder, place: place.place, files: 0 };
      counted.files += tally.files;
      this.removedCounts.set(key, counted);
      this.options.log.info(
        {
          folder: place.folder,
          place: place.place,
          dir: place.dir,
          removed: tally.files,
          bytes: tally.bytes,
        },
        'retention: old files removed',
      );
    }
  }

  /** Removes old files under `dir`; answers whether `dir` is empty afterwards. */
  private async sweep(
    dir: string,
    cutoff: number,
    tally: { files: number; bytes: number },
    root: boolean,
  ): Promise<boolean> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (!root && (err as NodeJS.ErrnoException).code === 'ENOENT') return true;
      throw err;
    }
    let left = entries.length;
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (await this.sweep(full, cutoff, tally, false)) {
          await fs.rmdir(full).then(
            () => left--,
            () => {},
          );
        }
        continue;
      }
      // Regular files only: a link is never followed nor removed.
      if (!entry.isFile()) continue;
      const st = await fs.lstat(full).catch(() => undefined);
      if (!st || st.mtimeMs >= cutoff) continue;
      await fs.unlink(full).then(
        () => {
          left--;
          tally.files++;
          tally.bytes += st.size;
        },
        () => {},
      );
    }
    return left === 0;
  }
}
