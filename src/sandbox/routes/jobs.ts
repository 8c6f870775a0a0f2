import path from 'node:path';
import { isoTime } from '../../core/clock.js';
import { checkPayloadRules, normalisePayload, payloadViolationStatus } from '../../domain/payload-rules.js';
import {
  type PayloadJobRequest,
  payloadJobRequestSchema,
  singleFileJobRequestSchema,
  type Workflow,
} from '../../domain/wire.js';
import { saveBlob } from '../blobs.js';
import { payloadItem } from '../content/index.js';
import type { SandboxContext } from '../context.js';
import { type Caller, parseMaxItems, problem, type Router, type SandboxRequest, sendJson } from '../http.js';
import type { Lifecycle } from '../lifecycle.js';
import { payloadEventFields } from '../payload-event.js';
import { renderPayloadDocumentPdf } from '../proofs.js';
import { type JobKind, type JobRecord, toWireJob } from '../records.js';
import { callerOf, isIsoDateTime, readJsonBody, strictTimeParam } from './route-helpers.js';
import { WORKFLOW_KIND } from './workflows.js';

/** Which extensions a single-file workflow takes (decisions.md, Workflows). */
const SINGLE_FILE_EXTENSIONS: Record<string, readonly string[]> = {
  PDF: ['.pdf', '.zip'],
  DATA_FILE: ['.csv', '.xml'],
  UBL: ['.xml', '.zip'],
};

function workflowFor(ctx: SandboxContext, caller: Caller, workflowId: string): Workflow {
  const workflow = ctx.store.get<Workflow & { id: string }>(WORKFLOW_KIND, workflowId);
  if (!workflow || workflow.isDeleted) throw problem(404, `workflow ${workflowId} does not exist`);
  if (workflow.companyId !== caller.companyId)
    throw problem(403, `workflow ${workflowId} belongs to another company`);
  return workflow;
}

/** The payload rules (payload-rules.ts), then the sandbox's own check of the execution date. */
function checkRules(
  endpoint: 'payload-pdf' | 'payload-word',
  request: PayloadJobRequest,
  workflow: Workflow,
): void {
  const violations = checkPayloadRules({ endpoint, request, workflow });
  if (violations.length > 0) {
    const errors = violations.map((v) => ({ field: v.field, message: v.message }));
    const status = payloadViolationStatus(violations);
    const shown = status === 415 ? violations.filter((v) => v.status === 415) : violations;
    throw problem(status, shown.map((v) => v.message).join('; '), errors);
  }
  // The client's wire schema is tolerant; the service is not: a date-time or nothing.
  const at = request.sendingEventExecutionDateUtc;
  if (at !== undefined && at !== null && (typeof at !== 'string' || !isIsoDateTime(at))) {
    const field = 'sendingEventExecutionDateUtc';
    throw problem(400, `${field} must be an ISO 8601 date-time`, [{ field, message: 'invalid date-time' }]);
  }
}

export function registerJobRoutes(router: Router, ctx: SandboxContext, lifecycle: Lifecycle): void {
  const newJob = (
    caller: Caller,
    workflow: Workflow,
    kind: JobKind,
    fields: { name: string; filename: string; awaiting: boolean },
  ): JobRecord => {
    const now = ctx.clock.now();
    const at = isoTime(now);
    return {
      id: ctx.newId('job'),
      name: fields.name,
      workflowId: workflow.id,
      companyId: caller.companyId,
      departmentId: workflow.departmentId,
      filename: fields.filename,
      status: fields.awaiting ? 'AWAITING_FILE_UPLOAD' : 'PROCESSING',
      startDate: at,
      createdAt: at,
      lastModifiedAt: at,
      ...(fields.awaiting ? { uploadExpiresAt: isoTime(now + ctx.settings.uploadWindowMs) } : {}),
      sendingEventCount: 0,
      errorList: [],
      kind,
      jobAuthor: caller.clientId,
    };
  };

  const answerUploadJob = (res: Parameters<typeof sendJson>[0], job: JobRecord) => {
    ctx.store.insert('job', job, { companyId: job.companyId });
    lifecycle.trackAwaiting(job);
    const expiresAt = Date.parse(job.uploadExpiresAt ?? '');
    ctx.log.info({ jobId: job.id, workflowId: job.workflowId, kind: job.kind }, 'job created');
    sendJson(res, 201, {
      id: job.id,
      fileUploadUrl: ctx.signer.sign(`/upload/${job.id}`, expiresAt),
      uploadExpiresAt: job.uploadExpiresAt,
    });
  };

  /** A payload job from the request: the rules run on it as sent, the job takes it normalised. */
  const newPayloadJob = async (
    req: SandboxRequest,
    endpoint: 'payload-pdf' | 'payload-word',
    awaiting: boolean,
  ) => {
    const caller = callerOf(req);
    const raw = await readJsonBody(req, payloadJobRequestSchema);
    const workflow = workflowFor(ctx, caller, raw.workflowId);
    // Rules name fields as sent, so they run before normalisation.
    checkRules(endpoint, raw, workflow);
    const body = normalisePayload(raw);
    const job = newJob(caller, workflow, endpoint, { name: body.jobName, filename: body.filename, awaiting });
    job.payload = body.payload;
    if (body.sendingEventExecutionDateUtc)
      job.sendingEventExecutionDateUtc = body.sendingEventExecutionDateUtc;
    return { job, workflow, body };
  };

  router.add('POST', '/jobs/single-file', async (req, res) => {
    const caller = callerOf(req);
    const body = await readJsonBody(req, singleFileJobRequestSchema);
    const workflow = workflowFor(ctx, caller, body.workflowId);
    const type = workflow.inputSource.type;
    const errors: { field: string; message: string }[] = [];
    if (!workflow.enabled) errors.push({ field: 'workflowId', message: 'the workflow is not enabled' });
    if (!workflow.validated) errors.push({ field: 'workflowId', message: 'the workflow is not validated' });
    const allowed = SINGLE_FILE_EXTENSIONS[type];
    if (!allowed) {
      errors.push({
        field: 'workflowId',
        message: `the workflow's input source ${type} takes no single file`,
      });
    } else if (!allowed.includes(path.extname(body.filename).toLowerCase())) {
      errors.push({ field: 'filename', message: `a ${type} workflow takes ${allowed.join(' or ')} files` });
    }
    if (errors.length > 0) throw problem(400, errors.map((e) => e.message).join('; '), errors);
    answerUploadJob(
      res,
      newJob(caller, workflow, 'single-file', {
        name: body.jobName ?? body.filename,
        filename: body.filename,
        awaiting: true,
      }),
    );
  });

  router.add('POST', '/jobs/payload-pdf', async (req, res) => {
    const { job } = await newPayloadJob(req, 'payload-pdf', true);
    answerUploadJob(res, job);
  });

  router.add('POST', '/jobs/payload-word', async (req, res) => {
    const { job, workflow, body } = await newPayloadJob(req, 'payload-word', false);
    const item = payloadItem(body.payload, body.filename);
    const pdf = renderPayloadDocumentPdf({
      jobName: body.jobName,
      recipient: item.recipient,
      templateData: body.payload.templateData ?? {},
      createdAt: job.createdAt,
    });
    const name = body.filename.toLowerCase().endsWith('.pdf') ? body.filename : `${body.filename}.pdf`;
    const original = saveBlob(ctx, { name, contentType: 'application/pdf', data: pdf });
    job.sendingEventCount = 1;
    ctx.store.insert('job', job, { companyId: job.companyId });
    lifecycle.createEvent({
      job,
      workflow,
      item,
      original,
      ...payloadEventFields(job, workflow),
    });
    ctx.log.info({ jobId: job.id, workflowId: job.workflowId, kind: job.kind }, 'job created');
    sendJson(res, 201, { id: job.id });
  });

  router.add('GET', '/jobs/:id', (req, res) => {
    const caller = callerOf(req);
    const job = ctx.store.get<JobRecord>('job', req.params['id'] ?? '');
    if (!job || job.companyId !== caller.companyId)
      throw problem(404, `job ${req.params['id']} does not exist`);
    sendJson(res, 200, toWireJob(job, ctx.settings.names));
  });

  router.add('GET', '/jobs', (req, res) => {
    const caller = callerOf(req);
    const maxItems = parseMaxItems(req.query);
    const from = strictTimeParam(req.query, 'from');
    const until = strictTimeParam(req.query, 'until');
    const workflowId = req.query.get('workflowId') ?? undefined;
    const after = req.query.get('after') ?? undefined;
    const filtered = from !== undefined || until !== undefined || workflowId !== undefined;
    const page = ctx.store.page<JobRecord>('job', {
      companyId: caller.companyId,
      maxItems,
      ...(after !== undefined ? { after } : {}),
      // Without a filter the store counts in SQL instead of reading every record.
      ...(filtered
        ? {
            where: (r) => {
              const job = r as JobRecord;
              const start = Date.parse(job.startDate);
              return (
                (from === undefined || start > from) &&
                (until === undefined || start < until) &&
                (workflowId === undefined || job.workflowId === workflowId)
              );
            },
          }
        : {}),
    });
    if (!page)
      throw problem(400, `after names no job: ${after}`, [{ field: 'after', message: 'unknown id' }]);
    const items = page.items.map((job) => toWireJob(job, ctx.settings.names));
    sendJson(res, 200, { items, totalItems: page.totalItems });
  });
}
