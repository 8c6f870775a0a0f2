/**
 * `docex-agent status <path|jobId> [--config <file>]`: what the journal knows of a file (by its
 * drop or claimed path) or a job, with its history. Reads the journal beside a running agent
 * (SQLite WAL lets a reader in); never shows an upload URL (the journal never hands one out here).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { JOURNAL_FILE } from '../agent/agent.js';
import { loadConfig } from '../config/index.js';
import { systemClock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { type HistoryEntry, Journal, type JournalItem } from '../journal/index.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Items for a path (as given, or absolute) or else a job id. */
export function findItems(journal: Journal, query: string): JournalItem[] {
  const byPath = journal.byPath(path.resolve(query));
  if (byPath.length > 0) return byPath;
  const exact = journal.byPath(query);
  if (exact.length > 0) return exact;
  const byJob = journal.byJobId(query);
  if (!byJob) return [];
  // A payload row's job: show its file with it.
  const parent = byJob.parentId === undefined ? undefined : journal.get(byJob.parentId);
  return parent ? [byJob, parent] : [byJob];
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
    `  history:`,
    ...history.map(historyLine),
  ];
  return `${lines.join('\n')}\n`;
}

export function statusText(journalFile: string, query: string): { found: boolean; text: string } {
  if (!existsSync(journalFile)) return { found: false, text: `no journal at ${journalFile}\n` };
  const journal = Journal.open(journalFile, { clock: systemClock, log: silentLogger() });
  try {
    const items = findItems(journal, query);
    if (items.length === 0) return { found: false, text: `nothing in the journal for ${query}\n` };
    return { found: true, text: items.map((i) => formatItem(i, journal.history(i.id))).join('\n') };
  } finally {
    journal.close();
  }
}

/** The `status` command, loaded when it runs. */
export async function statusCommand(query: string, opts: { config: string }): Promise<void> {
  try {
    const { config } = loadConfig(opts.config);
    const { found, text } = statusText(path.join(config.stateDir, JOURNAL_FILE), query);
    (found ? process.stdout : process.stderr).write(text);
    process.exitCode = found ? 0 : 1;
  } catch (err) {
    process.stderr.write(
      `docex-agent status: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
    );
    process.exitCode = 2;
  }
}
