/**
 * The return path of jobs the agent created: following them to their final states, the status
 * files the ERP imports, and the delivery proofs. Defaults live here and nowhere else.
 */
import { z } from 'zod';
import { outputTargetSchema, stateOutputDefault } from './output-schema.js';
import { countOrAuto, countOrOff, cronExpression, durationMs, flag } from './schema-types.js';

export const PROOF_TEMPLATE_FIELDS = [
  'date',
  'folder',
  'file',
  'stem',
  'jobId',
  'sendingEventId',
  'type',
  'fileReference',
  'ext',
] as const;

const followSchema = z
  .strictObject({
    schedule: cronExpression('*/5 * * * * *').describe(
      'When due jobs are polled (node-cron expression, local time; six fields: seconds first). A job is due by its own backoff (below); a webhook polls its job at once.',
    ),
    firstPollMs: durationMs(10_000).describe('First poll of a job this long after the agent recorded it.'),
    minIntervalMs: durationMs(15_000).describe(
      'Interval after a poll that saw a change; it doubles with every poll that saw none.',
    ),
    maxIntervalMs: durationMs(15 * 60_000).describe('Longest interval between two polls of a job.'),
    intervalWhileWebhooksMs: durationMs(30 * 60_000).describe(
      'While webhooks arrive (one in the last webhookQuietMs), polls of a job are at least this far apart: polling stays on as the safety net.',
    ),
    webhookQuietMs: durationMs(15 * 60_000).describe(
      'Webhooks count as arriving when the last one came less than this long ago.',
    ),
    concurrency: countOrAuto(1, 32).describe(
      "Polls and downloads in flight at the same time. auto: as many as the pace of the service host allows (pace.concurrency, shared with the intake: from 4 up to 32, one more per round of good answers); a number: at most that many of the follower's own. Either way it halves when the service answers 429 or 503, and no call starts before the time a Retry-After names.",
    ),
    maxCallsPerMinute: countOrOff(1, 100_000).describe(
      'A fixed budget: API calls the follower starts in any 60 s (job reads, event lists, download URLs, downloads); the rest waits. off: only the service paces it (concurrency above).',
    ),
    documentWaitMs: durationMs(3_600_000).describe(
      'A final sending event without any document of proofs.documentTypes keeps its job followed this long (documents may come after the final state).',
    ),
    maxFollowMs: durationMs(30 * 86_400_000).describe(
      'A job that is not final after this long is no longer followed (logged, and marked in its status file).',
    ),
  })
  .prefault({})
  .describe('How jobs are followed until every sending event is final.');

const statusesSchema = z
  .strictObject({
    target: outputTargetSchema
      .prefault(stateOutputDefault('statuses'))
      .describe(
        "Where YYYY-MM-DD/<file>.status.json (per dropped file, rewritten on every change; a file of a recursive folder's sub-folder under that sub-path: acme/invoices/YYYY-MM-DD/<file>.status.json) and statuses-YYYY-MM-DD.csv are written.",
      ),
    dailyCsvSchedule: cronExpression('5 0 * * *').describe(
      'When statuses-YYYY-MM-DD.csv files are written (node-cron expression, local time): every past UTC day not written yet, one row per sending event that became final that day.',
    ),
  })
  .prefault({})
  .describe('Status files for the ERP.');

const proofsSchema = z
  .strictObject({
    target: outputTargetSchema
      .prefault(stateOutputDefault('proofs'))
      .describe('Where the documents of final sending events are written.'),
    documentTypes: z
      .array(z.string().regex(/^[A-Z_]+$/, 'expected a document type such as DELIVERY_PROOF'))
      .default(['DELIVERY_PROOF', 'SUBMISSION_REPORT'])
      .describe('Document types fetched; others (ORIGINAL, RETURN_RECEIPT) are left alone unless named.'),
    nameTemplate: z
      .string()
      .min(1)
      .default('<date>/<stem>/<sendingEventId>-<type>.<ext>')
      .refine((t) => t.includes('<sendingEventId>'), 'must contain <sendingEventId>')
      .refine(
        (t) => t.includes('<type>') || t.includes('<fileReference>'),
        'must contain <type> or <fileReference>',
      )
      .refine(
        (t) =>
          [...t.matchAll(/<([^<>]*)>/g)].every((m) =>
            (PROOF_TEMPLATE_FIELDS as readonly string[]).includes(m[1]!),
          ),
        `placeholders: ${PROOF_TEMPLATE_FIELDS.map((f) => `<${f}>`).join(', ')}`,
      )
      .describe(
        "Relative path of each document. <date>: UTC day the file was claimed; <stem>/<file>: the dropped file name without/with extension; <folder>, <jobId>, <sendingEventId>, <type>, <fileReference>, <ext> (from the document name or content type). A file of a recursive folder's sub-folder has its documents under that sub-path (acme/invoices/<this path>).",
      ),
  })
  .prefault({})
  .describe('Delivery proofs and submission reports of final sending events.');

export const returnsSchema = z
  .strictObject({
    enabled: flag(true).describe('Follow every job the agent created and write statuses and proofs.'),
    follow: followSchema,
    statuses: statusesSchema,
    proofs: proofsSchema,
  })
  .prefault({})
  .describe('The return path: job statuses and delivery proofs for the ERP.');

export type ReturnsConfig = z.output<typeof returnsSchema>;
export type FollowConfig = ReturnsConfig['follow'];
