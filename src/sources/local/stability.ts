/**
 * Pure decisions on "is this file complete?". The shell stats files and feeds observations in; this
 * module never touches the filesystem or a clock, so every rule is tested with plain numbers.
 */

/** How a folder tells us a file is complete. */
export type StabilityRule =
  /** Size and mtime unchanged across observations for `settleMs` (default rule, 2 s). */
  | { kind: 'settle'; settleMs: number }
  /** The producer writes `<name><suffix>` (e.g. `invoice.pdf.done`) once the data file is complete. */
  | { kind: 'done-marker'; suffixes: readonly string[] }
  /** The producer writes under a temporary name and renames in; any non-temp name is complete. */
  | { kind: 'rename-in' };

export interface Observation {
  size: number;
  mtimeMs: number;
  /** Could we open it for reading? Producers that chmod after writing leave an unreadable window. */
  readable: boolean;
  /** done-marker rule only: the marker found beside the file, if any. */
  marker?: { name: string; mtimeMs: number } | undefined;
}

/** What was last seen and since when it has been unchanged. */
export interface StabilityState {
  size: number;
  mtimeMs: number;
  since: number;
}

/**
 * `unreadable`: complete by the rule, but it cannot be opened for reading (the ERP's umask or
 * group): the shell reports it once the state lasts, and keeps waiting.
 */
export type Verdict = 'wait' | 'stable' | 'unreadable';

export interface ObserveResult {
  state: StabilityState;
  verdict: Verdict;
}

/**
 * Under the settle rule an empty file must stay empty this many settle times before it is taken
 * (and rejected as empty): some producers create the file well before they write to it.
 */
export const EMPTY_SETTLE_FACTOR = 15;

/** Unreadable files are never taken: a chmod-after-write producer may still be busy, or the mode shuts the agent out. */
function verdictOf(complete: boolean, obs: Observation): Verdict {
  if (!complete) return 'wait';
  return obs.readable ? 'stable' : 'unreadable';
}

/**
 * Feeds one observation. Settle: stable only when the same size and mtime have been seen
 * continuously for `settleMs`; any change resets the timer. The file's age (now - mtime) is never
 * used: Windows copies keep the source's old mtime.
 */
export function observe(
  state: StabilityState | undefined,
  obs: Observation,
  now: number,
  rule: StabilityRule,
): ObserveResult {
  const same = state !== undefined && state.size === obs.size && state.mtimeMs === obs.mtimeMs;
  const next: StabilityState = same ? state : { size: obs.size, mtimeMs: obs.mtimeMs, since: now };
  switch (rule.kind) {
    case 'settle': {
      const settleMs = obs.size === 0 ? rule.settleMs * EMPTY_SETTLE_FACTOR : rule.settleMs;
      const settled = same && now - next.since >= settleMs;
      return { state: next, verdict: verdictOf(settled, obs) };
    }
    case 'done-marker': {
      // A marker older than the data means the data was rewritten after the marker (or the marker
      // is left over from an earlier file of the same name): not ready.
      const marked = obs.marker !== undefined && obs.marker.mtimeMs >= obs.mtimeMs;
      return { state: next, verdict: verdictOf(marked, obs) };
    }
    case 'rename-in':
      return { state: next, verdict: verdictOf(true, obs) };
  }
}

/**
 * When a file first seen at `state` (a folder scan's stat) is next worth a look: under the settle
 * rule not before `settleMs` has passed, as a look sooner can only say "wait" (a change it would
 * see is seen by that look too, and starts the settle over as it would have). The plain settle
 * time, even for an empty file: its longer settle must not hide its first bytes. Other rules: now.
 */
export function firstLookDue(state: StabilityState, rule: StabilityRule): number | undefined {
  return rule.kind === 'settle' ? state.since + rule.settleMs : undefined;
}

/**
 * Temporary names that are never taken, whatever the rule: dotfiles (also our own `.processing`),
 * Office lock files `~$*`, editor backups `*~`, and partial-download suffixes.
 */
const TEMP_SUFFIXES = [
  '.tmp',
  '.temp',
  '.part',
  '.partial',
  '.crdownload',
  '.download',
  '.filepart',
  '.swp',
  '.!ut',
  '.lock',
];

export function isIgnoredName(name: string, extraSuffixes: readonly string[] = []): boolean {
  if (name.length === 0 || name.startsWith('.') || name.startsWith('~$') || name.endsWith('~')) return true;
  const lower = name.toLowerCase();
  return (
    TEMP_SUFFIXES.some((s) => lower.endsWith(s)) || extraSuffixes.some((s) => lower.endsWith(s.toLowerCase()))
  );
}

/** The marker suffix `name` ends with, if `name` is itself a marker (never a data file). */
export function markerSuffixOf(name: string, suffixes: readonly string[]): string | undefined {
  return suffixes.find((s) => name.length > s.length && name.endsWith(s));
}

/** For a marker name, the data file it marks: `invoice.pdf.done` → `invoice.pdf`. */
export function dataNameOfMarker(name: string, suffixes: readonly string[]): string | undefined {
  const suffix = markerSuffixOf(name, suffixes);
  return suffix === undefined ? undefined : name.slice(0, -suffix.length);
}

/** Marker names to look for beside a data file, in the configured order. */
export function markerNamesFor(dataName: string, suffixes: readonly string[]): string[] {
  return suffixes.map((s) => dataName + s);
}

/** The rule's marker suffixes, or none when the rule has no markers. */
export function markerSuffixes(rule: StabilityRule): readonly string[] {
  return rule.kind === 'done-marker' ? rule.suffixes : [];
}

/**
 * Should this directory entry be watched at all? Markers and temp names are not candidates; markers
 * only wake their data file up (see `dataNameOfMarker`).
 */
export function isCandidateName(
  name: string,
  rule: StabilityRule,
  included: (name: string) => boolean,
  extraTempSuffixes: readonly string[] = [],
): boolean {
  if (isIgnoredName(name, extraTempSuffixes)) return false;
  if (markerSuffixOf(name, markerSuffixes(rule)) !== undefined) return false;
  return included(name);
}
