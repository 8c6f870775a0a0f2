/**
 * The status formats the follower writes, in this order at each step. Each reads its own config
 * key under `returns.statuses` and answers no writer when that turns it off.
 */
import { dailyCsv } from './status-csv.js';
import { statusFiles } from './status-files.js';
import type { StatusFormat, StatusWriter, StatusWriterContext } from './status-writer.js';

const STATUS_FORMATS: readonly StatusFormat[] = [statusFiles, dailyCsv];

export function statusWriters(context: StatusWriterContext): StatusWriter[] {
  return STATUS_FORMATS.flatMap((format) => format(context) ?? []);
}
