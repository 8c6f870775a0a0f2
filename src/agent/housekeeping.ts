/**
 * Retention of the archive and error folders and of the output targets: files whose modification
 * time is older than their place's `retention` are removed (outputs/retention.ts). Runs a minute
 * after start and then every 6 hours (an unref'd timer: no wake-ups worth counting); each pass
 * logs one line per place that removed something, and the totals are served as metrics.
 *
 * Several agents on one PostgreSQL journal: a place every agent sees as the same one (the
 * journal, an output folder on an SFTP server) carries a cluster task name, and a pass runs it only
 * when this agent claims the task for the period (journal/cluster.ts: once across the agents, by
 * the database's clock). A local folder is this host's own and is swept by every agent.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { type JournalStore, pruneJournal, type TaskClaim } from '../journal/index.js';
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
  /** Swept once across the agents sharing the journal, under this task name (absent: by every agent). */
  clusterTask?: string;
}

/** The journal is one for all the agents on it: pruned by one of them per period. */
export const JOURNAL_RETENTION_TASK = 'retention:journal';

/** An output folder on an SFTP server is the same for every agent; a local one is this host's. */
function sharedOutputTask(place: string, description: string): string | undefined {
  return description.startsWith('sftp://') ? `retention:${place}:${description}` : undefined;
}

/** The output targets that have a retention (and can remove old files); `folder` is empty. */
export function outputRetentionPlaces(outputs: RetainedOutput[]): RetentionPlace[] {
  return outputs.flatMap(({ place, target, retentionMs }) => {
    const remove = target.removeOlderThan?.bind(target);
    if (!retentionMs || !remove) return [];
    const clusterTask = sharedOutputTask(place, target.description);
    return [
      {
        folder: '',
        place,
        dir: target.description,
        retentionMs,
        remove,
        ...(clusterTask ? { clusterTask } : {}),
      },
    ];
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
  return [
    {
      folder: '',
      place: 'journal',
      dir: journal.location,
      retentionMs,
      remove,
      clusterTask: JOURNAL_RETENTION_TASK,
    },
  ];
}

export interface HousekeepingOptions {
  places: () => RetentionPlace[];
  clock: Clock;
  log: Logger;
  firstRunMs?: number;
  intervalMs?: number;
  /** Claims a place's cluster task for this pass; absent: every place is this agent's. */
  claim?: TaskClaim;
}

const FIRST_RUN_MS = 60_000;
const INTERVAL_MS = 6 * 3_600_000;
/**
 * A cluster task is claimed for a little less than the interval: this agent's next pass, a timer
 * a few ms early, still finds it due, and another agent's pass in between does not.
 */
const CLAIM_SHARE_OF_INTERVAL = 0.9;

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

  /** Whether this agent sweeps the place in this pass (a shared one: when it claims the task). */
  private async ours(place: RetentionPlace): Promise<boolean> {
    const { claim, intervalMs, log } = this.options;
    if (!place.clusterTask || !claim) return true;
    const period = Math.max(1, Math.floor((intervalMs ?? INTERVAL_MS) * CLAIM_SHARE_OF_INTERVAL));
    const claimed = await claim(place.clusterTask, period);
    if (!claimed) {
      log.debug(
        { place: place.place, dir: place.dir, task: place.clusterTask },
        'retention: another agent runs it',
      );
    }
    return claimed;
  }

  private async pass(): Promise<void> {
    for (const place of this.options.places()) {
      const cutoff = this.options.clock.now() - place.retentionMs;
      let tally: Removed = { files: 0, bytes: 0 };
      try {
        if (!(await this.ours(place))) continue;
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
