/**
 * What the ERP sees of a sending event and a job, pure: built from the stored wire records. Used
 * by the status file and the daily CSV, so both say the same thing.
 */
import { isFinalSendingEvent, type Job, type SendingEvent } from '../domain/wire.js';

export interface IssueView {
  code: string | undefined;
  message: string;
  taskType: string | undefined;
}

export interface EventView {
  sendingEventId: string;
  recipient: string | undefined;
  sourceFileReference: string | undefined;
  businessStatus: string;
  status: string;
  final: boolean;
  startDate: string | undefined;
  endDate: string | undefined;
  errors: IssueView[];
  warnings: IssueView[];
  resendOf: string | undefined;
}

const RECIPIENT_NAMES = new Set(['recipient', 'recipientreference', 'recipient_reference']);

/** The recipient reference: a property or extra info named recipient, else the source file reference. */
export function recipientOf(event: SendingEvent): string | undefined {
  for (const list of [event.properties ?? [], event.extraInfo ?? []]) {
    const hit = list.find((p) => RECIPIENT_NAMES.has(p.name.toLowerCase()));
    if (hit && hit.value !== undefined && hit.value !== null) return String(hit.value);
  }
  return event.sendingSourceFileReference;
}

const issues = (list: SendingEvent['errorList']): IssueView[] =>
  (list ?? []).map((i) => ({ code: i.code, message: i.message, taskType: i.taskType }));

export function eventView(event: SendingEvent): EventView {
  return {
    sendingEventId: event.id,
    recipient: recipientOf(event),
    sourceFileReference: event.sendingSourceFileReference,
    businessStatus: event.businessStatus,
    status: event.status,
    final: isFinalSendingEvent(event),
    startDate: event.startDate ?? undefined,
    endDate: event.endDate ?? undefined,
    errors: issues(event.errorList),
    warnings: issues(event.warningList),
    resendOf: event.resendOf ?? undefined,
  };
}

export function jobErrors(job: Job | undefined): IssueView[] {
  return issues(job?.errorList);
}

export function parseJson<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}
