/**
 * The contract of a kind of source (a local folder, a folder on an SFTP server, …): everything the
 * rest of the agent asks of a source's configuration, declared once by the kind
 * (`sources/<kind>/kind.ts`) and listed in one registry (`kinds.ts`). The configuration parses it,
 * so a kind's definition is pure: zod, paths and plain values, never the source's I/O. What runs
 * the source is its factory (`open-source.ts`).
 */
import type { z } from 'zod';

/** Where a folder's claimed files lie on this machine, and under which path the journal records them. */
export interface IntakePlace {
  /** The folder whose `.processing/` holds claimed files. */
  dir: string;
  /** Where a file was dropped, from its path relative to the drop folder (`acme/invoices/x.pdf`). */
  originalPath(relative: string): string;
  /** The inverse: a recorded original path's relative path, undefined when it is not below the drop folder. */
  relativePath(originalPath: string): string | undefined;
}

/** A problem a kind finds in the folder around its source (a setting it cannot honour). */
export interface FolderIssue {
  path: (string | number)[];
  message: string;
}

/** What a kind may read of the folder around its source when judging it. */
export interface FolderAround {
  payloadPdf: { pairing: string };
  /** Set when the folder takes files in sub-folders too. */
  recursive?: { depth: number } | undefined;
}

/** The folder fields a kind's state-folder defaults fill. */
export interface FolderDirs<S> {
  name: string;
  source: S;
  archiveDir: string;
  errorDir: string;
}

/**
 * One kind of source. `Schema` is the strict object of its `source:` block (a `type` literal as
 * discriminator); `S` the source after the kind's defaults.
 */
export interface SourceKind<T extends string, Schema extends z.ZodType<{ type: T }>, S extends { type: T }> {
  type: T;
  /** A few words for the configuration's description: `type <type> (<label>)`. */
  label: string;
  schema: Schema;
  /** Defaults that depend on the source's own fields (a remote archive under its path). */
  defaults(source: z.output<Schema>): S;
  /** The folder's archive or error folder when the configuration names none; `''`: under the state folder. */
  defaultDir(source: S, which: 'archive' | 'error'): string;
  /** Fills what lies under the state folder once it is known (`''` defaults). */
  withStateDefaults<F extends FolderDirs<S>>(folder: F, stateDir: string): F;
  /** Settings of the folder around it that this kind cannot honour. */
  folderIssues(folder: FolderAround): FolderIssue[];
  /** Its local paths made absolute against the configuration file's folder (remote paths stay). */
  resolvePaths(source: S, base: string): S;
  /** Where its files are dropped, as a key: two folders with one key would take the same files. */
  identity(source: S): string;
  /** Where its claimed files lie on this machine and how the journal names them (recovery). */
  intake(source: S): IntakePlace;
  /**
   * The drop folder on this machine, checked by start, `check` and `status` (missing, not a folder,
   * unreachable) and by the ops health; undefined for a remote one (its own connection says).
   */
  localDropFolder(source: S): string | undefined;
  /** The folders the agent makes for this source at start, beside the archive and error folders. */
  ownDirs(source: S): string[];
  /**
   * Its files are copied into a spool of this agent: the claimed copy is this agent's own (the
   * journal records it remote; the lease is renewed before it is placed; a second copy is removed).
   */
  remote: boolean;
  /** Its claimed files lie where every agent on the journal reaches them (take-over, orphans). */
  sharedFolder: boolean;
}

/** Checks a kind against the contract and keeps its precise types. */
export function defineSourceKind<
  T extends string,
  Schema extends z.ZodType<{ type: T }>,
  S extends { type: T },
>(kind: SourceKind<T, Schema, S>): SourceKind<T, Schema, S> {
  return kind;
}
