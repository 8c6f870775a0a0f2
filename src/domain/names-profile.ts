/**
 * The two vocabularies of the service (decisions.md, "Names of the live service"): `spec`, the
 * published specification's names, and `reference`, the names of the live service's public API
 * reference. The sandbox speaks one of them, so each path of the tolerant client is tested end to
 * end; its records keep the specification's names inside and are translated at the wire.
 */
import { canonicalKind } from './wire.js';

export const NAMES_PROFILES = ['spec', 'reference'] as const;
export type NamesProfile = (typeof NAMES_PROFILES)[number];

/** The waiting job status: the specification's guides and the reference's job operations differ. */
export function waitingStatusName(profile: NamesProfile): string {
  return profile === 'reference' ? 'AWAITING_FOR_FILE' : 'AWAITING_FILE_UPLOAD';
}

/** A job status as the profile spells it (only the waiting state has two names). */
export function jobStatusName(status: string, profile: NamesProfile): string {
  return status === 'AWAITING_FILE_UPLOAD' ? waitingStatusName(profile) : status;
}

/** A channel identifier kind as the profile spells it: the reference says DOCCLE_* for DOCPORTAL_*. */
export function kindName(kind: string, profile: NamesProfile): string {
  const canonical = canonicalKind(kind);
  if (profile === 'reference' && canonical.startsWith('DOCPORTAL_'))
    return `DOCCLE_${canonical.slice('DOCPORTAL_'.length)}`;
  return canonical;
}

/**
 * Job statuses that fire job.status.changed under the reference: final ones and those that wait
 * for the caller (the sandbox's jobs have none of the latter besides creation, which is answered).
 */
const REFERENCE_JOB_WEBHOOK_STATUSES: ReadonlySet<string> = new Set(['COMPLETED', 'FAILED']);

/** Whether a job moving to `status` fires job.status.changed: the spec on every change. */
export function firesJobWebhook(status: string, profile: NamesProfile): boolean {
  return profile === 'spec' || REFERENCE_JOB_WEBHOOK_STATUSES.has(status);
}

/** Whether a webhook subscription must carry a `name` (the reference's "internal name"). */
export function requiresSubscriptionName(profile: NamesProfile): boolean {
  return profile === 'reference';
}
