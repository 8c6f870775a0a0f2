/**
 * The column lists the PostgreSQL stores read, shaped for store-rows.ts's mappers (the same rows
 * as SQLite's: `done` as 0/1), and the grouping of documents by event.
 */
import type { DocumentRow, Row } from '../store-rows.js';

export const JOB_COLUMNS = `job_id, source_id, item_id, row_index, label, job_name, recorded_at, status,
  job_json, next_poll_at, unchanged_polls, polls, done::int AS done, gave_up`;

export const SOURCE_COLUMNS =
  'item_id, folder, file_name, sha256, claimed_at, day, status_path, version, written_version';

export const EVENT_COLUMNS = 'id, job_id, business_status, status, final_at, final_day, event_json';

export const DOCUMENT_COLUMNS = `sending_event_id, file_reference, job_id, type, name, content_type, size,
  path, state, failures, next_try_at, last_error`;

/** pg's rows as the mappers take them (texts, numbers and nulls only: the columns above). */
export const asRows = (rows: Record<string, unknown>[]): Row[] => rows as Row[];

/** Documents by their sending event, each list in the order given. */
export function byEvent(documents: readonly DocumentRow[]): Map<string, DocumentRow[]> {
  const grouped = new Map<string, DocumentRow[]>();
  for (const d of documents) {
    const list = grouped.get(d.sendingEventId);
    if (list) list.push(d);
    else grouped.set(d.sendingEventId, [d]);
  }
  return grouped;
}
