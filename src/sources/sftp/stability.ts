/**
 * Pure completeness decisions over remote listings. The SFTP source lists its folder once per poll
 * and feeds the whole listing in; this module keeps, per name, what was last seen and since when,
 * and answers the files that are complete. The rule itself is the local folders' one
 * (`observe` in ../local/stability.ts): settle = same size and mtime in two listings settleMs apart,
 * done-marker = the marker is listed and not older than the data; nothing here touches the network.
 */

import type { RemoteEntry } from '../../sftp/types.js';
import {
  dataNameOfMarker,
  isCandidateName,
  markerNamesFor,
  markerSuffixes,
  observe,
  type StabilityRule,
  type StabilityState,
} from '../local/stability.js';

export interface ReadyFile {
  entry: RemoteEntry;
  /** done-marker rule: the marker listed beside it (moved along with the file). */
  marker?: RemoteEntry;
}

export interface ListingVerdict {
  /** Complete files, in listing order. */
  ready: ReadyFile[];
  /** Candidates still settling (or waiting for their marker). */
  waiting: number;
}

/**
 * What one folder has seen across listings. Names that vanish are forgotten, so the memory is
 * bounded by the folder's size, and a name that comes back starts settling again.
 */
export class ListingTracker {
  private states = new Map<string, StabilityState>();

  constructor(
    private readonly rule: StabilityRule,
    private readonly included: (name: string) => boolean,
  ) {}

  /** Feeds one complete listing taken at `now`. */
  feed(entries: readonly RemoteEntry[], now: number): ListingVerdict {
    const suffixes = markerSuffixes(this.rule);
    const markers = new Map<string, RemoteEntry>();
    if (suffixes.length > 0) {
      for (const e of entries) {
        if (e.type === 'file' && dataNameOfMarker(e.name, suffixes) !== undefined) markers.set(e.name, e);
      }
    }
    const next = new Map<string, StabilityState>();
    const ready: ReadyFile[] = [];
    let waiting = 0;
    for (const entry of entries) {
      // Only regular files: symlinks could point anywhere on the server, folders are not drops. In a
      // recursive folder names are relative paths (`acme/x.pdf`); the rules read the file's own name.
      const own = entry.name.slice(entry.name.lastIndexOf('/') + 1);
      if (entry.type !== 'file' || !isCandidateName(own, this.rule, this.included)) continue;
      const marker = markerNamesFor(entry.name, suffixes)
        .map((n) => markers.get(n))
        .find((m) => m !== undefined);
      const result = observe(
        this.states.get(entry.name),
        {
          size: entry.size,
          mtimeMs: entry.mtimeMs,
          readable: true, // an unreadable file fails its download and is retried
          marker: marker && { name: marker.name, mtimeMs: marker.mtimeMs },
        },
        now,
        this.rule,
      );
      next.set(entry.name, result.state);
      if (result.verdict === 'stable') ready.push(marker ? { entry, marker } : { entry });
      else waiting++;
    }
    this.states = next;
    return { ready, waiting };
  }

  /** Forget a name (claimed, or to be observed afresh). */
  forget(name: string): void {
    this.states.delete(name);
  }

  get size(): number {
    return this.states.size;
  }
}
