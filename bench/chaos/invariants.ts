/**
 * The guarantees a chaos run must end with, checked over plain data (pure: the gathering is in
 * observe.ts): every input file is in archive or error exactly once, every uploaded job matches
 * its file's MD5, nothing was submitted twice, and no output folder holds a partial file.
 * Files are matched by content (MD5), so a file placed twice under a second free name is caught.
 * A routed set (its `route`) also wants every job of its documents in that workflow and company.
 */
import { parseJobName } from '../../src/journal/job-name.js';

export interface InputFile {
  name: string;
  md5: string;
  /** A companion of an item's file (a sidecar, an indexed PDF): archived beside it, no record of its own. */
  companion?: boolean;
}

/** A document the service must end with exactly once (see modes.ts): one job, found by its name. */
export interface ExpectedDocumentSet {
  itemName: string;
  itemSha256: string;
  itemMd5: string;
  documents: readonly { rowIndex: number | undefined; uploadMd5?: string | undefined }[];
  /** Where the set's route sends it: every job of its documents must be there (a routed folder). */
  route?: { workflowId: string; companyId: string } | undefined;
}

export interface ObservedJob {
  id: string;
  name: string;
  uploadedMd5: string | null;
  /** The workflow and the company the service recorded the job under (the managed one, if sent as it). */
  workflowId?: string;
  companyId?: string;
}

/** A file in an output folder, its path relative to that folder; `md5` for data files. */
export interface FolderEntry {
  path: string;
  md5?: string;
  /** An `.error.json`'s code. */
  code?: string | undefined;
}

export interface Observation {
  /** Every job the sandbox knows (its control API). */
  jobs: readonly ObservedJob[];
  archive: readonly FolderEntry[];
  error: readonly FolderEntry[];
  /** Files still in the drop folder, `.processing/` included. */
  leftInInbox: readonly string[];
  /** Any other folder the agent writes (output targets): only checked for partial files. */
  outputs?: readonly FolderEntry[];
}

export interface InvariantOptions {
  /** A transient fault is no reason to refuse a good file: a refusal is a violation. */
  expectArchived?: boolean;
  /**
   * Placement only (a remote SFTP archive): each input placed exactly once and nothing partial;
   * no side files are expected there and the jobs are checked elsewhere.
   */
  placementOnly?: boolean;
  /**
   * Count per document, not per file: each document of each set has exactly one job (with its
   * upload, for upload modes), matched by the deterministic job name. Without it, uploads are
   * matched to input files by MD5.
   */
  sets?: readonly ExpectedDocumentSet[];
  /**
   * Temp names' writers (placeWriter) of agents SIGKILLed and never started again at their place
   * (several agents on one journal). An output write such a kill cut leaves its temp file: no other
   * agent can tell it from a write in flight until the agent counts as dead, and then removes it
   * when it writes that target again (or a start's sweep, a day later). Listed in `partial`, not
   * a violation.
   */
  killedWriters?: readonly string[];
}

export interface InvariantReport {
  ok: boolean;
  files: number;
  /** Documents counted (rows, PDFs of a batch; a plain file is one). */
  documents?: number;
  archived: number;
  refused: number;
  /** Input names placed nowhere, or archived without an uploaded job. */
  lost: string[];
  /** Input names placed twice or uploaded twice. */
  duplicates: string[];
  /** Uploaded jobs or placed files whose MD5 matches no input. */
  mismatches: string[];
  /** Temporary or partial files left in an output folder. */
  partial: string[];
  /** Every failed check, one sentence each. */
  violations: string[];
  /** Documents of a routed set with a job in another workflow or company than their route's. */
  misrouted?: string[];
  /** The return path's checks (returns-invariants.ts): proofs expected, status files checked. */
  returns?: { proofs: number; statusFiles: number };
}

const SIDE_SUFFIXES = ['.result.json', '.error.json', '.error.txt'];

const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);
const isSideFile = (p: string) => SIDE_SUFFIXES.some((s) => p.endsWith(s));

/** Temporary names a writer uses before its final rename: such a file is never a finished output. */
export function isPartialName(p: string): boolean {
  const name = baseName(p);
  return name.startsWith('.') || /\.(tmp|part|partial|incomplete)$/i.test(name) || name.startsWith('~$');
}

function countBy<T>(items: Iterable<T>, key: (t: T) => string | undefined): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    if (k !== undefined) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

export function checkInvariants(
  inputs: readonly InputFile[],
  seen: Observation,
  options: InvariantOptions = {},
): InvariantReport {
  const violations: string[] = [];
  const lost = new Set<string>();
  const duplicates = new Set<string>();
  const mismatches: string[] = [];
  const partial: string[] = [];
  const known = new Set(inputs.map((f) => f.md5));
  const companionMd5s = new Set(inputs.filter((f) => f.companion).map((f) => f.md5));

  const data = (entries: readonly FolderEntry[]) =>
    entries.filter((e) => !isSideFile(e.path) && !isPartialName(e.path));
  const archived = data(seen.archive);
  const refused = data(seen.error);
  const archivedBy = countBy(archived, (e) => e.md5);
  const refusedBy = countBy(refused, (e) => e.md5);
  const uploads = seen.jobs.filter((j) => j.uploadedMd5 !== null);
  const uploadedBy = countBy(uploads, (j) => j.uploadedMd5 ?? undefined);

  for (const [where, entries] of [
    ['archive', seen.archive],
    ['error', seen.error],
    ['output', seen.outputs ?? []],
  ] as const) {
    for (const e of entries) {
      if (!isPartialName(e.path)) continue;
      partial.push(`${where}/${e.path}`);
      const killed = where === 'output' && options.killedWriters?.some((w) => e.path.endsWith(`-${w}.tmp`));
      if (!killed) violations.push(`partial file left in ${where}: ${e.path}`);
    }
  }
  const paths = new Set(seen.archive.map((e) => e.path));
  const errorPaths = new Set(seen.error.map((e) => e.path));
  for (const e of options.placementOnly ? [] : archived.filter((a) => !companionMd5s.has(a.md5 ?? ''))) {
    if (!paths.has(`${e.path}.result.json`)) violations.push(`archived ${e.path} has no .result.json`);
  }
  for (const e of refused.filter((r) => !companionMd5s.has(r.md5 ?? ''))) {
    for (const suffix of ['.error.json', '.error.txt']) {
      if (!errorPaths.has(`${e.path}${suffix}`)) violations.push(`refused ${e.path} has no ${suffix}`);
    }
  }
  const checkJobs = !options.placementOnly && options.sets === undefined;

  for (const file of inputs) {
    const inArchive = archivedBy.get(file.md5) ?? 0;
    const inError = refusedBy.get(file.md5) ?? 0;
    const uploaded = uploadedBy.get(file.md5) ?? 0;
    if (inArchive + inError === 0) {
      lost.add(file.name);
      // A claim of a name already in `.processing` takes a numbered name: list what is left.
      const where = seen.leftInInbox.some((p) => baseName(p) === file.name)
        ? 'still in the drop folder'
        : `in neither archive nor error${seen.leftInInbox.length > 0 ? ` (left in the drop folder: ${seen.leftInInbox.slice(0, 10).join(', ')})` : ''}`;
      violations.push(`${file.name} is ${where}`);
    } else if (inArchive + inError > 1) {
      duplicates.add(file.name);
      violations.push(
        `${file.name} is placed ${inArchive + inError} times (archive ${inArchive}, error ${inError})`,
      );
    }
    if (checkJobs && uploaded > 1) {
      duplicates.add(file.name);
      violations.push(`${file.name} was uploaded ${uploaded} times`);
    }
    if (checkJobs && inArchive > 0 && uploaded === 0) {
      lost.add(file.name);
      violations.push(`${file.name} is archived but no job holds its upload`);
    }
    if (checkJobs && inError > 0 && uploaded > 0) violations.push(`${file.name} is refused but was uploaded`);
    if (inError > 0 && options.expectArchived) {
      const where = refused.find((r) => r.md5 === file.md5)?.path;
      const code = seen.error.find((e) => e.path === `${where}.error.json`)?.code;
      violations.push(`${file.name} was refused (${code ?? 'no code'})`);
    }
  }

  let documents: number | undefined;
  let misrouted: string[] | undefined;
  if (options.sets && !options.placementOnly) {
    const refusedItems = new Set(refused.map((e) => e.md5 ?? ''));
    const byDocument = checkDocuments(options.sets, seen.jobs, refusedItems);
    documents = byDocument.documents;
    for (const name of byDocument.lost) lost.add(name);
    for (const name of byDocument.duplicates) duplicates.add(name);
    if (options.sets.some((set) => set.route)) misrouted = byDocument.misrouted;
    violations.push(...byDocument.violations);
  }

  const uploadMd5s = new Set(
    (options.sets ?? []).flatMap((set) => set.documents.map((d) => d.uploadMd5 ?? '')),
  );
  for (const job of uploads) {
    if (known.has(job.uploadedMd5!) || uploadMd5s.has(job.uploadedMd5!)) continue;
    mismatches.push(`job ${job.id}`);
    violations.push(`job ${job.id} (${job.name}) holds an upload matching no input file's MD5`);
  }
  for (const e of [...archived, ...refused]) {
    if (e.md5 !== undefined && known.has(e.md5)) continue;
    mismatches.push(e.path);
    violations.push(`placed file ${e.path} matches no input file's MD5`);
  }

  return {
    ok: violations.length === 0,
    files: inputs.length,
    ...(documents === undefined ? {} : { documents }),
    ...(misrouted === undefined ? {} : { misrouted }),
    archived: archived.length,
    refused: refused.length,
    lost: [...lost],
    duplicates: [...duplicates],
    mismatches,
    partial,
    violations,
  };
}

/**
 * Per document: jobs are matched by the tag of their deterministic name (the item file's SHA-256
 * and the payload row). Upload modes count the jobs that hold the document's bytes (an orphan job
 * without upload, left by a lost create answer, is allowed); payload-word jobs count as sent.
 * A routed set's documents: every job of that name, orphans too, is in the route's workflow and
 * company (a job created elsewhere, even one never uploaded, went where the route does not say).
 */
export function checkDocuments(
  sets: readonly ExpectedDocumentSet[],
  jobs: readonly ObservedJob[],
  refusedItemMd5s: ReadonlySet<string>,
): { documents: number; lost: string[]; duplicates: string[]; misrouted: string[]; violations: string[] } {
  const byKey = new Map<string, ObservedJob[]>();
  for (const job of jobs) {
    const parsed = parseJobName(job.name);
    if (!parsed) continue;
    const key = `${parsed.sha12}:${parsed.rowIndex ?? '-'}`;
    byKey.set(key, [...(byKey.get(key) ?? []), job]);
  }
  const lost: string[] = [];
  const duplicates: string[] = [];
  const misrouted: string[] = [];
  const violations: string[] = [];
  let documents = 0;
  for (const set of sets) {
    const refused = refusedItemMd5s.has(set.itemMd5);
    for (const doc of set.documents) {
      documents++;
      const label = doc.rowIndex === undefined ? set.itemName : `${set.itemName} row ${doc.rowIndex}`;
      const named = byKey.get(`${set.itemSha256.slice(0, 12)}:${doc.rowIndex ?? '-'}`) ?? [];
      const sent = doc.uploadMd5 === undefined ? named : named.filter((j) => j.uploadedMd5 === doc.uploadMd5);
      if (sent.length > 1) {
        duplicates.push(label);
        violations.push(`${label} was sent ${sent.length} times (jobs ${sent.map((j) => j.id).join(', ')})`);
      } else if (sent.length === 0 && !refused) {
        lost.push(label);
        violations.push(`${label} has no job that holds it`);
      } else if (sent.length > 0 && refused) {
        violations.push(`${label} was sent, but its file was refused`);
      }
      const route = set.route;
      if (!route) continue;
      const elsewhere = named.filter(
        (j) => j.workflowId !== route.workflowId || j.companyId !== route.companyId,
      );
      if (elsewhere.length === 0) continue;
      misrouted.push(label);
      for (const job of elsewhere) {
        violations.push(
          `${label}: job ${job.id} is in workflow ${job.workflowId ?? '(none)'} of company ${job.companyId ?? '(none)'}; its route says workflow ${route.workflowId} of company ${route.companyId}`,
        );
      }
    }
  }
  return { documents, lost, duplicates, misrouted, violations };
}

/** One report of two checks (the local and the remote side of an SFTP folder). */
export function mergeReports(a: InvariantReport, b: InvariantReport, prefix: string): InvariantReport {
  const union = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  return {
    ok: a.ok && b.ok,
    files: a.files,
    archived: a.archived,
    refused: a.refused,
    lost: union(a.lost, b.lost),
    duplicates: union(a.duplicates, b.duplicates),
    mismatches: [...a.mismatches, ...b.mismatches.map((m) => prefix + m)],
    partial: [...a.partial, ...b.partial.map((p) => prefix + p)],
    violations: [...a.violations, ...b.violations.map((v) => prefix + v)],
    ...(a.returns ? { returns: a.returns } : {}),
  };
}
