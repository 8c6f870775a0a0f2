/**
 * `docex-agent usage export --from --until [--company] > usage.csv`: pages through Interface B's
 * usage details by nextCursor and writes one CSV row per usage event as the pages arrive.
 */
import type { Command } from 'commander';
import type { UsageEvent } from '../api/usage-api.js';
import { csvLine } from '../core/csv.js';
import {
  type AdminCliDeps,
  adminAction,
  connectionOptions,
  parseDate,
  parsePositiveInt,
} from './output/admin-context.js';
import { writeOut } from './output/cli-io.js';
import { progressLine } from './output/progress.js';

export const USAGE_CSV_COLUMNS = [
  'id',
  'timestamp',
  'companyId',
  'departmentId',
  'jobId',
  'sendingEventId',
  'channel',
  'unit',
  'quantity',
] as const;

export function usageCsvRow(event: UsageEvent): string {
  return csvLine(USAGE_CSV_COLUMNS.map((c) => event[c]));
}

interface ExportOpts {
  from: string;
  until: string;
  company?: string;
  department?: string[];
  pageSize?: number;
}

export function registerUsageCommand(program: Command, deps: AdminCliDeps = {}): void {
  const usage = program.command('usage').description('usage of the partner and the companies it manages');
  connectionOptions(usage.command('export'))
    .description('write usage events as CSV to stdout')
    .requiredOption('--from <date>', 'start (inclusive), e.g. 2026-10-01', parseDate)
    .requiredOption('--until <date>', 'end (exclusive), e.g. 2026-11-01', parseDate)
    .option('--company <id>', 'only this company (default: every company the partner may see)')
    .option('--department <id...>', 'only usage of these departments')
    .option('--page-size <n>', 'events per request (1..1000)', parsePositiveInt, 1000)
    .action(
      adminAction(deps, async (run, opts: ExportOpts) => {
        await writeOut(run.io.stdout, csvLine(USAGE_CSV_COLUMNS));
        let rows = 0;
        const events = run.client.usage.iterateDetails({
          from: opts.from,
          until: opts.until,
          ...(opts.pageSize ? { maxItems: opts.pageSize } : {}),
          ...(opts.company ? { companyId: opts.company } : {}),
          ...(opts.department ? { departmentIds: opts.department } : {}),
        });
        // The spec does not say in which order events come: the line says how many and the last one's time.
        const progress = progressLine(run.io.stderr, {
          label: 'usage export',
          unit: 'items',
          noun: 'events',
        });
        try {
          for await (const event of events) {
            await writeOut(run.io.stdout, usageCsvRow(event));
            rows++;
            progress.update(rows, event.timestamp);
          }
        } finally {
          progress.end();
        }
        run.io.stderr.write(`exported ${rows} usage events\n`);
      }),
    );
}
