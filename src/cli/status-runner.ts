/**
 * `docex-agent status <name|path|jobId> [--config <file>]`: what the journal knows of a file (by
 * its bare name, its drop, claimed, archived or error path) or a job, with its history, and what
 * the return path knows of its job: sending events, their outcome and where the proofs were saved. Reads the journal beside a running agent
 * (SQLite WAL lets a reader in); never shows an upload URL (the journal never hands one out here).
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, type Stats, statSync } from 'node:fs';
import path from 'node:path';
import { readUnreadableReport } from '../agent/unreadable-report.js';
import { type AgentConfig, journalLocationOf, loadConfig } from '../config/index.js';
import { describeGroup, describeUser } from '../core/accounts.js';
import { isDocexError } from '../core/errors.js';
import { octalMode } from '../core/file-mode.js';
import {
  type HistoryEntry,
  isFinal,
  type JournalItem,
  type JournalLocation,
  type JournalReader,
  journalFiles,
  openJournalReader,
} from '../journal/index.js';
import { SEND_WINDOW_CODE } from '../pipeline/send-windows.js';
import { openReturnsReader } from '../returns/open-stores.js';
import { type DropFolderTrouble, dropFolderTrouble, folderKey } from '../sources/drop-folder.js';
import { kindOf } from '../sources/kinds.js';
import { READ_ONLY_SECRETS } from './read-only.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Items whose bare file name is `name`, newest first (a name dropped again shows each time). */
const MAX_BY_NAME = 20;

/** The record the agent left beside an archived (`.result.json`) or refused (`.error.json`) file. */
function sideRecord(file: string): { sha256?: string; folder?: string; file?: string } | undefined {
  for (const suffix of ['.result.json', '.error.json']) {
    try {
      return JSON.parse(readFileSync(`${file}${suffix}`, 'utf8')) as { sha256?: string };
    } catch {
      // none, or not readable: try the next
    }
  }
  return undefined;
}

/** Items of a file placed in an archive or error folder: by its side record, else by its content. */
function placedItems(journal: JournalReader, file: string): Promise<number[]> {
  const record = sideRecord(file);
  if (record?.sha256 && record.folder && record.file) {
    return journal.fileItemIds(
      { sha256: record.sha256, placed: { folder: record.folder, fileName: record.file } },
      MAX_BY_NAME,
    );
  }
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
  return journal.fileItemIds({ sha256 }, MAX_BY_NAME);
}

/**
 * Items for a drop or claimed path (as given, or absolute), a job id, a bare file name, or the
 * path of an archived or refused file.
 */
export async function findItems(journal: JournalReader, query: string): Promise<JournalItem[]> {
  const byPath = await journal.byPath(path.resolve(query));
  if (byPath.length > 0) return byPath;
  const exact = await journal.byPath(query);
  if (exact.length > 0) return exact;
  const byJob = await journal.byJobId(query);
  if (byJob) {
    // A payload row's job: show its file with it.
    const parent = byJob.parentId === undefined ? undefined : await journal.get(byJob.parentId);
    return parent ? [byJob, parent] : [byJob];
  }
  let ids: number[] = [];
  if (!query.includes('/') && !query.includes(path.sep)) {
    ids = await journal.fileItemIds({ fileName: query }, MAX_BY_NAME);
  } else if (existsSync(query) && statSync(query).isFile()) ids = await placedItems(journal, query);
  const items = await Promise.all(ids.map((id) => journal.get(id)));
  return items.filter((item): item is JournalItem => item !== undefined);
}

/** What the return path knows of a job: its sending events and their documents (read-only). */
export async function returnsLines(
  location: JournalLocation,
  stateDir: string,
  jobId: string,
  proofsRoot?: string,
): Promise<string[]> {
  const reader = openReturnsReader(location, stateDir, { busyTimeoutMs: 5000 });
  try {
    const known = await reader.followedJob(jobId);
    if (!known) return [];
    const { job: followed, events, documents } = known;
    if (!followed && events.length === 0) return [];
    const lines = [
      `  followed: job ${followed?.status ?? 'not polled yet'}${followed?.done ? ', done' : ''}${followed?.gaveUp ? `, gave up: ${followed.gaveUp}` : ''}`,
    ];
    for (const e of events) {
      lines.push(
        `  sending event ${e.id}: ${e.businessStatus} (${e.status})${e.finalAt === undefined ? '' : `, final ${iso(e.finalAt)}`}`,
      );
      for (const d of documents.filter((doc) => doc.sendingEventId === e.id)) {
        const where = proofsRoot ? path.join(proofsRoot, d.path) : d.path;
        const state =
          d.state === 'done'
            ? `saved at ${where}`
            : `${d.state}${d.failures > 0 ? `, ${d.failures} failed tries (${d.lastError ?? ''})` : ''}`;
        lines.push(`    ${d.type}: ${state}`);
      }
    }
    return lines;
  } finally {
    await reader.close();
  }
}

function historyLine(entry: HistoryEntry): string {
  const detail = entry.detail ? ` ${JSON.stringify(entry.detail)}` : '';
  return `    ${iso(entry.at)}  ${entry.from ?? '-'} -> ${entry.to}${detail}`;
}

export function formatItem(item: JournalItem, history: readonly HistoryEntry[]): string {
  const lines = [
    `${item.kind === 'row' ? `row ${item.rowIndex} of ` : ''}${item.fileName}  [${item.state}]`,
    `  folder ${item.folder}, workflow ${item.workflowId}, mode ${item.mode}`,
    ...(item.sourcePath ? [`  dropped as ${item.sourcePath}`] : []),
    `  sha256 ${item.sha256}${item.size === undefined ? '' : `, ${item.size} bytes`}`,
    ...(item.jobId ? [`  job ${item.jobId} (name ${item.jobName ?? '-'}, attempt ${item.attempt})`] : []),
    ...(item.rejectCode ? [`  refused: ${item.rejectCode}: ${item.rejectReason ?? ''}`] : []),
    ...(item.lastFailureCode === SEND_WINDOW_CODE && item.nextTryAt !== undefined && !isFinal(item.state)
      ? [`  waits: send window closed until ${iso(item.nextTryAt)}`]
      : []),
    // Several agents on one journal: who drives the file now (`docex-agent agents` names its host).
    ...(item.owner !== undefined && !isFinal(item.state)
      ? [
          `  held by agent ${item.owner} (epoch ${item.epoch}${item.leaseUntil === undefined ? '' : `, lease until ${iso(item.leaseUntil)}`})`,
        ]
      : []),
    `  history:`,
    ...history.map(historyLine),
  ];
  return `${lines.join('\n')}\n`;
}

export interface ReturnsPlace {
  /** The state folder: the returns store of a SQLite journal is there (a PostgreSQL one is in its database). */
  stateDir: string;
  /** The proofs output folder, when local: proof paths are shown under it. */
  proofsRoot?: string;
}

export async function statusText(
  location: JournalLocation,
  query: string,
  returns?: ReturnsPlace,
): Promise<{ found: boolean; text: string }> {
  const [file] = journalFiles(location);
  if (file !== undefined && !existsSync(file)) return { found: false, text: `no journal at ${file}\n` };
  const journal = await openJournalReader(location, { busyTimeoutMs: 5000 });
  try {
    const items = await findItems(journal, query);
    if (items.length === 0) return { found: false, text: `nothing in the journal for ${query}\n` };
    const text: string[] = [];
    for (const i of items) {
      const followed =
        returns && i.jobId ? await returnsLines(location, returns.stateDir, i.jobId, returns.proofsRoot) : [];
      text.push(formatItem(i, await journal.history(i.id)) + followed.map((l) => `${l}\n`).join(''));
    }
    return { found: true, text: text.join('\n') };
  } finally {
    await journal.close();
  }
}

/** The local drop folders' copies of `query` (a bare name, or a path in a drop folder) that are there now. */
function inDropFolders(
  config: Pick<AgentConfig, 'folders'>,
  query: string,
): { folder: string; file: string; st: Stats }[] {
  const bare = !query.includes('/') && !query.includes(path.sep);
  const found: { folder: string; file: string; st: Stats }[] = [];
  for (const folder of config.folders) {
    const drop = kindOf(folder.source).localDropFolder(folder.source);
    if (drop === undefined) continue;
    const dir = path.resolve(drop);
    const file = bare ? path.join(dir, query) : path.resolve(query);
    if (path.dirname(file) !== dir) continue;
    try {
      // Its stats are kept: a file claimed meanwhile is shown as it was, not an ENOENT.
      const st = lstatSync(file);
      if (st.isFile()) found.push({ folder: folder.name, file, st });
    } catch {
      // not there (or not visible to whoever runs status)
    }
  }
  return found;
}

/**
 * What is known of a file still in a drop folder, not taken: its mode and owner (as this command
 * sees them), and what the agent reported of it (`<stateDir>/unreadable-files.json`): that it
 * cannot read, stat or move it, and the fix. Undefined when no drop folder holds it.
 */
export function waitingText(
  config: Pick<AgentConfig, 'folders' | 'stateDir'>,
  query: string,
): string | undefined {
  const found = inDropFolders(config, query);
  if (found.length === 0) return undefined;
  const report = readUnreadableReport(config.stateDir);
  const blocks = found.map(({ folder, file, st }) => {
    const lines = [
      `${path.basename(file)}  [waiting in the drop folder: not taken]`,
      `  folder ${folder}: ${file}`,
      `  mode ${octalMode(st.mode)}, owner ${describeUser(st.uid)}, group ${describeGroup(st.gid)}, ${st.size} bytes, modified ${iso(st.mtimeMs)}`,
    ];
    const reported = report?.files.find((f) => f.path === file);
    const asOf = report
      ? `the agent's report of ${report.writtenAt}, pid ${report.pid}`
      : 'no report from the agent';
    if (reported) {
      lines.push(
        `  the agent cannot ${reported.cannot} it (${reported.errno}) since ${iso(reported.since)} (${asOf})`,
        `  fix: ${reported.fix}`,
      );
    } else {
      lines.push(
        `  not reported unreadable (${asOf}): the agent takes a file once it is complete by the folder's rule; if it stays, see the agent's log`,
      );
    }
    return `${lines.join('\n')}\n`;
  });
  return blocks.join('\n');
}

/**
 * The local drop folders the agent stops at start for want of the folder itself (missing, or not a
 * folder, and no `create: true`), as this command sees them: a file asked for that is found
 * nowhere may have been dropped where the configuration did not look. Folders this command may
 * not reach are left out (it may run as another user than the agent).
 */
export function missingDropFoldersText(config: Pick<AgentConfig, 'folders'>): string | undefined {
  const lines: string[] = [];
  for (const folder of config.folders) {
    const drop = kindOf(folder.source).localDropFolder(folder.source);
    if (drop === undefined || folder.enabled === false || folder.create === true) continue;
    const dir = path.resolve(drop);
    let what: DropFolderTrouble;
    try {
      if (statSync(dir).isDirectory()) continue;
      what = 'is not a folder';
    } catch (err) {
      // As start says it; EACCES may be this command's user's alone.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') what = 'does not exist';
      else if (code === 'ENOTDIR') what = `cannot be reached (${code})`;
      else continue;
    }
    const { text, fix } = dropFolderTrouble(dir, folderKey(config.folders, folder.name), what);
    lines.push(`folder ${folder.name} is stopped: drop folder ${text}\n  fix: ${fix}\n`);
  }
  return lines.length > 0 ? lines.join('') : undefined;
}

/** The `status` command, loaded when it runs. */
export async function statusCommand(query: string, opts: { config: string }): Promise<void> {
  try {
    // The journal alone: its PostgreSQL password, if any, is the one secret read (not the service's).
    const { config } = loadConfig(opts.config, { secretsOnlyUnder: READ_ONLY_SECRETS.status });
    const proofs = config.returns.proofs.target;
    const { found, text } = await statusText(journalLocationOf(config), query, {
      stateDir: config.stateDir,
      ...(proofs.type === 'local' ? { proofsRoot: proofs.path } : {}),
    });
    // A copy still in a drop folder (one the agent cannot read, or not complete yet) is shown too.
    const waiting = waitingText(config, query);
    if (found) process.stdout.write(waiting ? `${text}\n${waiting}` : text);
    else if (waiting) process.stdout.write(waiting);
    else {
      // Found nowhere: a drop folder the agent does not watch (a mistyped path) may be why.
      const missing = missingDropFoldersText(config);
      process.stderr.write(missing ? `${text}\n${missing}` : text);
    }
    process.exitCode = found || waiting ? 0 : 1;
  } catch (err) {
    process.stderr.write(
      `docex-agent status: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
    );
    process.exitCode = 2;
  }
}
