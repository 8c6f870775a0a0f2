/**
 * The registry of the kinds of source: the configuration's `source:` union is built from it, and
 * every part of the agent that depends on where a folder's files come from asks the folder's kind
 * (`kindOf`) rather than branching on its type. A new kind is its folder `sources/<kind>/` (its
 * `kind.ts`, pure, and its source) and its line here; its factory's line in `open-source.ts` is
 * asked for by the compiler.
 */
import type { z } from 'zod';
import { relativeSegments, subFolders } from '../domain/relative-path.js';
import type { IntakePlace, SourceKind } from './kind.js';
import { localKind } from './local/kind.js';
import { sftpKind } from './sftp/kind.js';

export const SOURCE_KINDS = [localKind, sftpKind] as const;

type Kind = (typeof SOURCE_KINDS)[number];
/** The `type` of every registered kind. */
export type SourceType = Kind['type'];
/** A folder's source as parsed, before its kind's defaults. */
export type ParsedSource = z.output<Kind['schema']>;
/** A folder's source after its kind's defaults: one of the registered kinds' configurations. */
export type SourceConfig = ReturnType<Kind['defaults']>;
/** The source configuration of the kind of type `T`. */
export type SourceConfigOf<T extends SourceType> = Extract<SourceConfig, { type: T }>;

type SchemasOf<K extends readonly unknown[]> = {
  readonly [I in keyof K]: K[I] extends { schema: infer Schema } ? Schema : never;
};

/** Each kind's schema, in the registry's order (a tuple, as the union wants it). */
export const SOURCE_SCHEMAS = SOURCE_KINDS.map((kind) => kind.schema) as unknown as SchemasOf<
  typeof SOURCE_KINDS
>;

/** The kind of a source, its parts typed for any registered source. */
export function kindOf(source: {
  type: SourceType;
}): SourceKind<SourceType, z.ZodType<ParsedSource>, SourceConfig> {
  const kind = SOURCE_KINDS.find((k) => k.type === source.type);
  // The configuration's union admits registered types only; a hand-built one may not.
  if (!kind) throw new Error(`no source kind "${String(source.type)}"`);
  // Each kind's parts take only its own sources: the type picked the kind.
  return kind as unknown as SourceKind<SourceType, z.ZodType<ParsedSource>, SourceConfig>;
}

/** Where a folder's claimed files lie on this machine and how the journal names them. */
export function intakeOf(folder: { source: SourceConfig }): IntakePlace {
  return kindOf(folder.source).intake(folder.source);
}

/** A recorded file as the places that keep its sub-path know it (a journal item, a followed job's source). */
export interface RecordedDrop {
  /** Its path relative to the drop folder as recorded at its claim (undefined: an earlier agent's). */
  relativePath?: string | undefined;
  sourcePath?: string | undefined;
  fileName: string;
}

/**
 * A recorded file's path relative to its folder's drop folder (`acme/invoices/x.pdf`): what routes
 * match. The one recorded at its claim when there is one (it outlives a change of the folder's
 * path); else read from where it was dropped, and its name when that is not below the drop folder
 * (the configuration moved it). A recorded path that is not one the agent takes is never used.
 */
export function relativePathOf(folder: { source: SourceConfig } | undefined, file: RecordedDrop): string {
  return (
    recordedRelativePath(file) ??
    (file.sourcePath === undefined || folder === undefined
      ? undefined
      : intakeOf(folder).relativePath(file.sourcePath)) ??
    file.fileName
  );
}

function recordedRelativePath(file: RecordedDrop): string | undefined {
  const recorded = file.relativePath;
  return recorded !== undefined && relativeSegments(recorded) !== undefined ? recorded : undefined;
}

/** The sub-folders a recorded file was dropped in (`['acme', 'invoices']`), kept by its archive, error and status places. */
export function subFoldersOf(folder: { source: SourceConfig }, file: RecordedDrop): string[] {
  return subFolders(relativePathOf(folder, file));
}
