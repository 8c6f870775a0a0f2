/**
 * Retention of the archive and error folders and of the output targets: files whose modification
 * time is older than their place's `retention` are removed (outputs/retention.ts). Runs a minute
 * after start and then every 6 hours (an unref'd timer: no wake-ups worth counting); each pass
 * logs one line per place that removed something, and the totals are served as metrics.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { type JournalStore, pruneJournal } from '../journal/index.js';
import { type RetainedOutput, removeOldLocal } from '../outputs/retention.js';
import type { Removed } from '../outputs/types.js';

export interface RetentionPlace {
  /** The drop folder; empty for an output target (statuses, proofs, the Peppol inbox) and the journal. */
  folder: string;
  /** `archive`, `error`, the output (`statuses`, `proofs`, `peppol-inbox`) or `journal`. */
  place: string;
  /** The local folder, or the target's description (logs). */
  dir: string;
  retentionMs: number;
  /** How old files go; default: removed from the local folder `dir`. */
  remove?: (cutoffMs: number) => Promise<Removed>;
}

/** The output targets that have a retention (and can remove old files); `folder` is empty. */
export function outputRetentionPlaces(outputs: RetainedOutput[]): RetentionPlace[] {
  return outputs.flatMap(({ place, target, retentionMs }) => {
    const remove = target.removeOlderThan?.bind(target);
    return retentionMs && remove ? [{ folder: '', place, dir: target.description, retentionMs, remove }] : [];
  });
}

/** The journal's own retention: finished items pruned in batches (`files` counts items). */
export function journalRetentionPlace(
  journal: Pick<JournalStore, 'pruneFinished' | 'location'>,
  retentionMs: number | undefined,
): RetentionPlace[] {
  if (!retentionMs) return [];
  const remove = async (cutoffMs: number): Promise<Removed> => {
    const t = await pruneJournal(journal, cutoffMs);
    return { files: t.items, bytes: 0, detail: { rows: t.rows, history: t.history, batches: t.batches } };
  };
  return [{ folder: '', place: 'journal', dir: journal.location, retentionMs, remove }];
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
      let tally: Removed = { files: 0, bytes: 0 };
      try {
        tally = await (place.remove ?? ((c) => removeOldLocal(place.dir, c)))(cutoff);
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
          ...tally.detail,
        },
        'retention: old files removed',
      );
    }
  }
}
