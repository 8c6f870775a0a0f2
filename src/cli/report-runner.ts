/**
 * `docex-agent report --date YYYY-MM-DD [--config <file>]`: rewrites that day's
 * statuses-YYYY-MM-DD.csv (one row per sending event that became final that UTC day) from
 * the returns store (returns.sqlite in the state folder, or the journal's PostgreSQL database),
 * through the configured statuses target. Safe beside a running agent (SQLite WAL, or PostgreSQL);
 * the agent writes the same rows for the same day.
 */
import { type AgentConfig, journalLocationOf, loadConfig } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError, isDocexError } from '../core/errors.js';
import { silentLogger } from '../core/logger.js';
import { openExistingReturnsStore, openTarget } from '../returns/index.js';
import { csvFileName, writeDailyCsv } from '../returns/status-csv.js';
import { type ProgressLine, progressLine } from './output/progress.js';
import { READ_ONLY_SECRETS } from './read-only.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export interface ReportResult {
  file: string;
  rows: number;
  target: string;
}

/** Rebuilds one day's CSV; the config's paths must already be resolved. */
export async function rebuildDailyCsv(
  config: AgentConfig,
  day: string,
  clock: Clock = systemClock,
  onProgress?: (rows: number, total: number) => void,
): Promise<ReportResult> {
  if (
    !DAY.test(day) ||
    Number.isNaN(Date.parse(`${day}T00:00:00.000Z`)) ||
    new Date(`${day}T00:00:00.000Z`).toISOString().slice(0, 10) !== day
  ) {
    throw new DocexError(
      'DOCEX_CLI_USAGE',
      `--date must be a day such as 2026-11-21, not ${JSON.stringify(day)}`,
    );
  }
  const store = await openExistingReturnsStore(journalLocationOf(config), config.stateDir, clock);
  if (!store) {
    throw new DocexError(
      'DOCEX_CLI_USAGE',
      `no returns store beside the journal (${config.stateDir}): the agent has not followed any job yet`,
    );
  }
  const target = openTarget(config.returns.statuses.target, silentLogger(), 'returns.statuses.target');
  try {
    const rows = await writeDailyCsv(store, target, day, clock.now(), onProgress);
    return { file: csvFileName(day), rows, target: target.description };
  } finally {
    await store.close();
    await target.close();
  }
}

/** The `report` command, loaded when it runs. */
export async function reportCommand(opts: { date: string; config: string }): Promise<void> {
  // On a terminal only: rows read of the day's total, rewritten in place.
  let progress: ProgressLine | undefined;
  try {
    const { config } = loadConfig(opts.config, { secretsOnlyUnder: READ_ONLY_SECRETS.report });
    const result = await rebuildDailyCsv(config, opts.date, systemClock, (rows, total) => {
      progress ??= progressLine(process.stderr, {
        label: `report ${opts.date}`,
        unit: 'items',
        noun: 'rows',
        total,
      });
      progress.update(rows);
    }).finally(() => progress?.end());
    process.stdout.write(`${result.file}: ${result.rows} row(s) written to ${result.target}\n`);
    process.exitCode = 0;
  } catch (err) {
    process.stderr.write(
      `docex-agent report: ${isDocexError(err) ? `${err.code}: ${err.message}` : String(err)}\n`,
    );
    process.exitCode = isDocexError(err, 'DOCEX_CLI_USAGE') ? 2 : 1;
  }
}
