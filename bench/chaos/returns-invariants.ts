/**
 * The return path's guarantees at the end of a chaos run, checked over plain data (pure): what
 * the service holds (its jobs and sending events, the MD5 of every proof) against what the agents
 * wrote for the ERP (the proofs and statuses outputs), their logs and the webhook answers.
 *
 * "Exactly once", precisely (names from src/returns/proof-names.ts, status-files.ts, status-csv.ts):
 * - a proof: each document of a wanted type (DELIVERY_PROOF, SUBMISSION_REPORT) of each final
 *   sending event of a job that holds a dropped document is one file of the proofs output whose
 *   name begins `<sendingEventId>-<type>` (the default template `<date>/<stem>/<sendingEventId>-<type>.<ext>`;
 *   a name taken gets a suffix, which would show as a second file), with the service's bytes (MD5),
 *   and it was written once: one `proof written` line across every agent process (a second
 *   write of the same name replaces a file the ERP may have taken already);
 * - a status file: each dropped item archived has one `<date>/<item>.status.json` (a second, of the
 *   same item, would be `<item>.<itemId>.status.json`) which, settled, says `final: true`, lists
 *   exactly the jobs that hold the item's documents, each `followed: done`, with every sending
 *   event the service shows for it, in the service's final status, and names each wanted
 *   document's proof file;
 * - a daily CSV (`statuses-YYYY-MM-DD.csv`, only for a past UTC day: a run across midnight):
 *   each sending event in at most one row of all of them;
 * - a webhook delivery: accepted (202) by at most one agent, over all its attempts.
 * Before the run settles (`settled: false`, cells whose service clock stands still) only what can
 * never be right is checked: two files for one proof or one item, a proof with the wrong bytes or
 * of no sending event, a proof written twice, a delivery accepted twice.
 */
import { parseJobName } from '../../src/journal/job-name.js';
import { parseCsv } from '../../src/pipeline/inspect/csv.js';
import type { ExpectedDocumentSet, FolderEntry, ObservedJob } from './invariants.js';
import { isPartialName } from './invariants.js';

export interface ServiceDocument {
  type: string;
  fileReference: string;
  size: number;
  md5: string | null;
}

export interface ServiceEvent {
  id: string;
  jobId: string;
  businessStatus: string;
  status: string;
  final: boolean;
  documents: readonly ServiceDocument[];
}

/** A status file of the statuses output: its path, and its text (status files and CSVs only). */
export interface OutputFile {
  path: string;
  text?: string | undefined;
}

export interface ReturnsObservation {
  jobs: readonly ObservedJob[];
  events: readonly ServiceEvent[];
  proofs: readonly FolderEntry[];
  statuses: readonly OutputFile[];
  /** `proof written` lines of every agent process, by `<sendingEventId> <type>`. */
  proofsWritten?: ReadonlyMap<string, number>;
  /** Each webhook id's answers from the agents (the fan-out's record). */
  webhookAnswers?: ReadonlyMap<string, readonly { slot: number; status: number }[]>;
}

export interface ReturnsOptions {
  sets: readonly ExpectedDocumentSet[];
  /** Item names refused (no job, no status file). */
  refusedItems?: ReadonlySet<string>;
  /** The run settled: every document followed to its final events; check completeness too. */
  settled: boolean;
  documentTypes?: readonly string[];
}

export interface ReturnsReport {
  /** Wanted documents of final sending events (proofs expected). */
  proofs: number;
  /** Status files checked. */
  statusFiles: number;
  /** Proof files missing, or status files missing or not final (settled runs only). */
  missing: string[];
  /** Proofs or status files twice, proofs written twice, deliveries accepted twice. */
  duplicates: string[];
  violations: string[];
}

const DEFAULT_TYPES = ['DELIVERY_PROOF', 'SUBMISSION_REPORT'];
const baseName = (p: string) => p.slice(p.lastIndexOf('/') + 1);

interface StatusFileJson {
  final?: boolean;
  jobs?: {
    jobId?: string;
    followed?: string;
    sendingEvents?: {
      sendingEventId?: string;
      businessStatus?: string;
      final?: boolean;
      documents?: { type?: string; proof?: string }[];
    }[];
  }[];
}

/** Jobs of the service that hold a document of the set (by their deterministic name), as checkDocuments matches them. */
export function sentJobs(set: ExpectedDocumentSet, jobs: readonly ObservedJob[]): ObservedJob[] {
  const sha12 = set.itemSha256.slice(0, 12);
  return jobs.filter((job) => {
    const parsed = parseJobName(job.name);
    if (parsed?.sha12 !== sha12) return false;
    const doc = set.documents.find((d) => (d.rowIndex ?? null) === (parsed.rowIndex ?? null));
    if (!doc) return false;
    return doc.uploadMd5 === undefined || job.uploadedMd5 === doc.uploadMd5;
  });
}

/** The status file names of one item: its own, and the numbered one a second item of its name gets. */
function statusFilesOf(item: string, statuses: readonly OutputFile[]): OutputFile[] {
  const numbered = new RegExp(`^${item.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\\d+\\.status\\.json$`);
  return statuses.filter((f) => {
    const name = baseName(f.path);
    return name === `${item}.status.json` || numbered.test(name);
  });
}

/** Whether a status file lists exactly these jobs (false when it is not JSON). */
function listsJobs(file: OutputFile, jobs: readonly ObservedJob[]): boolean {
  let listed: string[];
  try {
    listed = ((JSON.parse(file.text ?? '') as StatusFileJson).jobs ?? []).map((j) => j.jobId ?? '');
  } catch {
    return false;
  }
  const want = new Set(jobs.map((j) => j.id));
  return listed.length === want.size && listed.every((id) => want.has(id));
}

export function checkReturns(seen: ReturnsObservation, options: ReturnsOptions): ReturnsReport {
  const types = new Set(options.documentTypes ?? DEFAULT_TYPES);
  const missing: string[] = [];
  const duplicates: string[] = [];
  const violations: string[] = [];
  const eventsOf = new Map<string, ServiceEvent[]>();
  for (const event of seen.events) eventsOf.set(event.jobId, [...(eventsOf.get(event.jobId) ?? []), event]);

  // Proof files by the document they name: `<sendingEventId>-<type>` begins the file name.
  const proofFiles = seen.proofs.filter((e) => !isPartialName(e.path));
  const claimed = new Set<string>();
  const filesOf = (eventId: string, type: string) =>
    proofFiles.filter((f) => baseName(f.path).startsWith(`${eventId}-${type}`));

  let proofCount = 0;
  let statusCount = 0;
  const knownEvents = new Set<string>();
  const statusNamed = new Set<string>();
  // By item name: each item's jobs and the proofs written for them.
  const statusChecks = new Map<string, { jobs: ObservedJob[]; proofOf: Map<string, string> }[]>();
  for (const set of options.sets) {
    const jobs = sentJobs(set, seen.jobs);
    const events = jobs.flatMap((job) => eventsOf.get(job.id) ?? []);
    // Proofs: every wanted document of every final event, once, with the service's bytes.
    const proofOf = new Map<string, string>();
    for (const event of events) {
      knownEvents.add(event.id);
      if (!event.final) {
        if (options.settled) {
          missing.push(`${set.itemName} ${event.id}`);
          violations.push(
            `${set.itemName}: sending event ${event.id} is not final at the service (${event.businessStatus})`,
          );
        }
        continue;
      }
      for (const doc of event.documents.filter((d) => types.has(d.type))) {
        proofCount++;
        const files = filesOf(event.id, doc.type);
        for (const f of files) claimed.add(f.path);
        const label = `${set.itemName}: ${doc.type} of ${event.id}`;
        if (files.length > 1) {
          duplicates.push(`${event.id} ${doc.type}`);
          violations.push(
            `${label} is in ${files.length} proof files (${files.map((f) => f.path).join(', ')})`,
          );
        } else if (files.length === 0 && options.settled) {
          missing.push(`${event.id} ${doc.type}`);
          violations.push(`${label} has no proof file`);
        }
        const file = files[0];
        if (file && doc.md5 !== null && file.md5 !== doc.md5) {
          violations.push(`${label}: ${file.path} differs from the service's document (MD5)`);
        }
        if (file) proofOf.set(`${event.id} ${doc.type}`, file.path);
      }
    }
    if (options.refusedItems?.has(set.itemName)) continue;
    const named = statusChecks.get(set.itemName) ?? [];
    named.push({ jobs, proofOf });
    statusChecks.set(set.itemName, named);
  }

  // The status files: one per item. Items of one name (an index.csv dropped again and again) each
  // have their own, numbered after the first, told apart by the jobs they list.
  for (const [item, named] of statusChecks) {
    const files = statusFilesOf(item, seen.statuses);
    for (const f of files) statusNamed.add(f.path);
    if (files.length > named.length) {
      duplicates.push(item);
      const of = named.length === 1 ? '' : ` for ${named.length} items`;
      violations.push(
        `${item} has ${files.length} status files${of} (${files.map((f) => f.path).join(', ')})`,
      );
      continue;
    }
    if (!options.settled) continue;
    statusCount += named.length;
    for (let i = files.length; i < named.length; i++) {
      missing.push(item);
      violations.push(`${item} has no status file`);
    }
    for (const file of files) {
      const owner = named.length === 1 ? named[0] : named.find((c) => listsJobs(file, c.jobs));
      if (!owner) {
        violations.push(`${item}: status file ${file.path} lists the jobs of no item of that name`);
        continue;
      }
      violations.push(...statusFileViolations(item, file, owner.jobs, eventsOf, owner.proofOf, types));
    }
  }

  for (const f of proofFiles) {
    if (!claimed.has(f.path))
      violations.push(`proof file ${f.path} is no wanted document of a final sending event`);
  }
  for (const f of seen.statuses) {
    if (f.path.endsWith('.status.json') && !statusNamed.has(f.path)) {
      violations.push(`status file ${f.path} is of no dropped item`);
    }
  }
  violations.push(...csvViolations(seen.statuses, knownEvents));
  for (const [key, n] of seen.proofsWritten ?? []) {
    if (n <= 1) continue;
    duplicates.push(key);
    violations.push(`proof ${key} was written ${n} times (agents' "proof written" lines)`);
  }
  for (const [id, answers] of seen.webhookAnswers ?? []) {
    const accepted = answers.filter((a) => a.status === 202);
    if (accepted.length <= 1) continue;
    duplicates.push(id);
    violations.push(
      `webhook ${id} was accepted ${accepted.length} times (slots ${accepted.map((a) => a.slot).join(', ')}): handled twice`,
    );
  }
  return { proofs: proofCount, statusFiles: statusCount, missing, duplicates, violations };
}

function statusFileViolations(
  item: string,
  file: OutputFile,
  jobs: readonly ObservedJob[],
  eventsOf: ReadonlyMap<string, readonly ServiceEvent[]>,
  proofOf: ReadonlyMap<string, string>,
  types: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  let doc: StatusFileJson;
  try {
    doc = JSON.parse(file.text ?? '') as StatusFileJson;
  } catch {
    return [`${item}: status file ${file.path} is not JSON`];
  }
  if (doc.final !== true) out.push(`${item}: status file ${file.path} is not final`);
  const listed = new Map((doc.jobs ?? []).map((j) => [j.jobId ?? '', j]));
  const want = new Set(jobs.map((j) => j.id));
  const extra = [...listed.keys()].filter((id) => !want.has(id));
  const absent = [...want].filter((id) => !listed.has(id));
  if (extra.length > 0 || absent.length > 0) {
    out.push(
      `${item}: status file jobs differ from the service's (missing ${absent.join(', ') || 'none'}, extra ${extra.join(', ') || 'none'})`,
    );
  }
  for (const [jobId, job] of listed) {
    if (!want.has(jobId)) continue;
    if (job.followed !== 'done')
      out.push(`${item}: job ${jobId} is ${job.followed ?? 'unknown'} in its status file`);
    const shown = new Map((job.sendingEvents ?? []).map((e) => [e.sendingEventId ?? '', e]));
    for (const event of eventsOf.get(jobId) ?? []) {
      const row = shown.get(event.id);
      if (!row) {
        out.push(`${item}: sending event ${event.id} is not in its status file`);
        continue;
      }
      if (row.businessStatus !== event.businessStatus || row.final !== event.final) {
        out.push(
          `${item}: sending event ${event.id} is ${row.businessStatus} in its status file, ${event.businessStatus} at the service`,
        );
      }
      for (const d of row.documents ?? []) {
        if (!d.type || !types.has(d.type)) continue;
        const written = proofOf.get(`${event.id} ${d.type}`);
        if (written !== undefined && d.proof !== written) {
          out.push(
            `${item}: ${d.type} of ${event.id} shows proof ${d.proof ?? 'none'}, written as ${written}`,
          );
        }
      }
    }
  }
  return out;
}

/** Each sending event in at most one row of all the daily CSVs, and only events of dropped items. */
function csvViolations(statuses: readonly OutputFile[], knownEvents: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const rows = new Map<string, number>();
  for (const f of statuses) {
    if (!/^statuses-\d{4}-\d{2}-\d{2}\.csv$/.test(baseName(f.path))) continue;
    const parsed = parseCsv(f.text ?? '', baseName(f.path));
    if (!('header' in parsed)) {
      out.push(`daily CSV ${f.path} does not parse`);
      continue;
    }
    const column = parsed.header.indexOf('sendingEventId');
    for (const record of parsed.records) {
      const id = record.cells[column] ?? '';
      rows.set(id, (rows.get(id) ?? 0) + 1);
      if (!knownEvents.has(id))
        out.push(`daily CSV ${f.path} has a row for ${id}, no event of a dropped item`);
    }
  }
  for (const [id, n] of rows) if (n > 1) out.push(`sending event ${id} is in ${n} rows of the daily CSVs`);
  return out;
}
