/**
 * Parking: a file the agent keeps failing on (the retry policy gave up) leaves `.processing/` for
 * the error folder instead of being tried for ever. What became of each document is settled first,
 * from the journal, and written beside the file: what the service already has (never to be sent
 * again), what may have reached it (look the job up by name first), and what was not sent. The
 * rows not sent of a payload-word file are written as a ready file to drop again.
 */
import type { PayloadJobRequest } from '../domain/wire.js';
import { isFinal, type JournalItem, needsUpload, type TransitionFields } from '../journal/index.js';
import { placeRejected, recordDone } from './finish.js';
import { planPayload } from './payload-plan.js';
import type { FolderRuntime, StepContext } from './types.js';

export const PARKED_CODE = 'DOCEX_PARKED';

type Fate = 'sent' | 'maybe-sent' | 'not-sent';

interface DocumentFate {
  label: string;
  fate: Fate;
  jobId?: string | undefined;
  jobName?: string | undefined;
  rowIndex?: number | undefined;
}

/** What the journal says of a document that has not finished. */
function fateOf(item: JournalItem): Fate {
  switch (item.state) {
    case 'uploaded':
      return 'sent';
    // A payload-word job is sent once it exists; an upload job holds nothing until its upload is confirmed.
    case 'created':
      return needsUpload(item.mode) ? 'maybe-sent' : 'sent';
    case 'creating':
      return 'maybe-sent';
    default:
      return 'not-sent';
  }
}

function describe(doc: DocumentFate): string {
  if (doc.fate === 'sent') return `  ${doc.label}: job ${doc.jobId}`;
  if (doc.fate === 'maybe-sent') {
    return doc.jobId
      ? `  ${doc.label}: job ${doc.jobId} exists, its upload was not confirmed (check the job's status)`
      : `  ${doc.label}: look up the job named ${doc.jobName} before sending it again`;
  }
  return `  ${doc.label}`;
}

export function parkReport(
  documents: readonly DocumentFate[],
  reason: string,
  readyFile: string | undefined,
): string {
  const section = (title: string, fate: Fate) => {
    const mine = documents.filter((d) => d.fate === fate);
    return mine.length === 0 ? [] : ['', title, ...mine.map(describe)];
  };
  const lines = [
    `Parked: ${reason}`,
    ...section('Already sent (do not send these again):', 'sent'),
    ...section('Maybe sent:', 'maybe-sent'),
    ...section('Not sent:', 'not-sent'),
  ];
  if (readyFile)
    lines.push('', `The rows not sent are in ${readyFile}, ready to drop into the folder again.`);
  return `${lines.join('\n')}\n`;
}

/**
 * Settles every unfinished document of `item` in the journal, rejects the item as parked, and
 * moves it to the error folder with its report. An item whose document the service already has
 * in full (`uploaded`) is not parked: only its archive step is left, and that is owed.
 */
export async function parkItem(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  reason: string,
): Promise<JournalItem | undefined> {
  if (isFinal(item.state) || item.state === 'uploaded') return undefined;
  const rows = await ctx.journal.rowsOf(item.id);
  const documents: DocumentFate[] = [];
  for (const row of rows) {
    if (row.state === 'done' && row.jobId) {
      documents.push({ label: row.label ?? `row ${row.rowIndex}`, fate: 'sent', jobId: row.jobId });
    }
    if (isFinal(row.state)) continue;
    const fate = fateOf(row);
    documents.push({
      label: row.label ?? `row ${row.rowIndex}`,
      fate,
      jobId: row.jobId,
      jobName: row.jobName,
      rowIndex: row.rowIndex,
    });
    // The service has a sent row: it is done, whatever became of the file.
    const fields: TransitionFields = { code: PARKED_CODE, reason: `${fate}: ${reason}` };
    if (fate === 'sent') await recordDone(ctx, row.id, fields);
    else await ctx.journal.transition(row.id, 'rejected', fields);
  }
  if (rows.length === 0) {
    documents.push({ label: item.fileName, fate: fateOf(item), jobId: item.jobId, jobName: item.jobName });
  }
  const ready = await unsentRows(ctx, runtime, item, documents);
  const parked = await ctx.journal.transition(item.id, 'rejected', { code: PARKED_CODE, reason });
  ctx.log.error(
    { folder: item.folder, file: item.fileName, jobId: item.jobId, code: PARKED_CODE, reason },
    'file parked in the error folder',
  );
  const sent = documents.some((d) => d.fate !== 'not-sent');
  await placeRejected(ctx, runtime, parked, {
    headline: sent
      ? `${item.fileName} was parked with part of it sent: read the lists below before sending anything again.`
      : `${item.fileName} was parked; nothing of it was sent.`,
    report: parkReport(documents, reason, ready ? `${item.fileName}.unsent.json` : undefined),
    ...(ready ? { sideFiles: [{ suffix: '.unsent.json', content: ready }] } : {}),
  });
  return parked;
}

/** A payload-word file's rows not sent, as a JSON array of requests (a payload-word file of its own). */
async function unsentRows(
  ctx: StepContext,
  runtime: FolderRuntime,
  item: JournalItem,
  documents: readonly DocumentFate[],
): Promise<string | undefined> {
  const unsent = documents.filter((d) => d.fate === 'not-sent' && d.rowIndex !== undefined);
  if (item.mode !== 'payload-word' || unsent.length === 0) return undefined;
  const plan = await planPayload(ctx, runtime, item).catch(() => undefined);
  if (!plan?.ok) return undefined;
  const requests: PayloadJobRequest[] = [];
  for (const doc of unsent) {
    const request = plan.byRow.get(doc.rowIndex!);
    if (!request) return undefined;
    // A new file, a new job name: the folder names each row's job from the file dropped again.
    const { jobName: _dropped, ...rest } = request;
    requests.push(rest as PayloadJobRequest);
  }
  return `${JSON.stringify(requests, null, 2)}\n`;
}
