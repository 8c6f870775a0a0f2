import path from 'node:path';
import type { z } from 'zod';
import { isoTime } from '../../core/clock.js';
import { checkPayloadRules, normalisePayload } from '../../domain/payload-rules.js';
import {
  type PayloadJobRequest,
  payloadJobRequestSchema,
  singleFileJobRequestSchema,
  type Workflow,
} from '../../domain/wire.js';
import { saveBlob } from '../blobs.js';
import { payloadItem } from '../content.js';
import type { SandboxContext } from '../context.js';
import {
  type Caller,
  parseMaxItems,
  problem,
  type Router,
  readJson,
  type SandboxRequest,
  sendJson,
} from '../http.js';
import type { Lifecycle } from '../lifecycle.js';
import { renderPayloadDocumentPdf } from '../proofs.js';
import { type JobKind, type JobRecord, toWireJob } from '../records.js';

/** Which extensions a single-file workflow takes (decisions.md, Workflows). */
const SINGLE_FILE_EXTENSIONS: Record<string, readonly string[]> = {
  PDF: ['.pdf', '.zip'],
  DATA_FILE: ['.csv', '.xml'],
  UBL: ['.xml', '.zip'],
};

const WIRE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function zodErrors(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
}

export function callerOf(req: SandboxRequest): Caller {
  if (!req.caller) throw problem(401, 'not authenticated');
  return req.caller;
}

/** A time filter of a list: absent, or exactly the wire format (else 400). */
export function timeFilter(req: SandboxRequest, name: string): string | undefined {
  const value = req.query.get(name);
  if (value === null) return undefined;
  if (!WIRE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
    throw problem(400, `${name} must be a UTC time as yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`, [
      { field: name, message: 'invalid date-time' },
    ]);
  }
  return value;
}

function workflowFor(ctx: SandboxContext, caller: Caller, workflowId: string): Workflow {
  const workflow = ctx.store.get<Workflow & { id: string }>('workflow', workflowId);
  if (!workflow || workflow.isDeleted) throw problem(404, `workflow ${workflowId} does not exist`);
  if (workflow.companyId !== caller.companyId)
    throw problem(403, `workflow ${workflowId} belongs to another company`);
  return workflow;
}

async function parseBody<T>(req: SandboxRequest, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await readJson(req.raw));
  if (!parsed.success) throw problem(400, 'the request body is not valid', zodErrors(parsed.error));
  return parsed.data;
}

function checkRules(
  endpoint: 'payload-pdf' | 'payload-word',
  request: PayloadJobRequest,
  workflow: Workflow,
): void {
  const violations = checkPayloadRules({ endpoint, request, workflow });
  if (violations.length === 0) return;
  const errors = violations.map((v) => ({ field: v.field, message: v.message }));
  const unsupported = violations.find((v) => v.status === 415);
  if (unsupported) throw problem(415, unsupported.message, errors);
  throw problem(400, violations.map((v) => v.message).join('; '), errors);
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

  router.add('POST', '/jobs/single-file', async (req, res) => {
    const caller = callerOf(req);
    const body = await parseBody(req, singleFileJobRequestSchema);
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
    const caller = callerOf(req);
    const raw = await parseBody(req, payloadJobRequestSchema);
    const workflow = workflowFor(ctx, caller, raw.workflowId);
    // Rules name fields as sent, so they run before normalisation.
    checkRules('payload-pdf', raw, workflow);
    const body = normalisePayload(raw);
    const job = newJob(caller, workflow, 'payload-pdf', {
      name: body.jobName,
      filename: body.filename,
      awaiting: true,
    });
    job.payload = body.payload;
    if (body.sendingEventExecutionDateUtc)
      job.sendingEventExecutionDateUtc = body.sendingEventExecutionDateUtc;
    answerUploadJob(res, job);
  });

  router.add('POST', '/jobs/payload-word', async (req, res) => {
    const caller = callerOf(req);
    const raw = await parseBody(req, payloadJobRequestSchema);
    const workflow = workflowFor(ctx, caller, raw.workflowId);
    // Rules name fields as sent, so they run before normalisation.
    checkRules('payload-word', raw, workflow);
    const body = normalisePayload(raw);
    const job = newJob(caller, workflow, 'payload-word', {
      name: body.jobName,
      filename: body.filename,
      awaiting: false,
    });
    job.payload = body.payload;
    if (body.sendingEventExecutionDateUtc)
      job.sendingEventExecutionDateUtc = body.sendingEventExecutionDateUtc;
    const item = payloadItem(body.payload, body.filename);
    const pdf = await renderPayloadDocumentPdf({
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
    sendJson(res, 200, toWireJob(job));
  });

  router.add('GET', '/jobs', (req, res) => {
    const caller = callerOf(req);
    const maxItems = parseMaxItems(req.query);
    const from = timeFilter(req, 'from');
    const until = timeFilter(req, 'until');
    const workflowId = req.query.get('workflowId') ?? undefined;
    const after = req.query.get('after') ?? undefined;
    const page = ctx.store.page<JobRecord>('job', {
      companyId: caller.companyId,
      maxItems,
      ...(after !== undefined ? { after } : {}),
      where: (r) => {
        const job = r as JobRecord;
        return (
          (from === undefined || job.startDate > from) &&
          (until === undefined || job.startDate < until) &&
          (workflowId === undefined || job.workflowId === workflowId)
        );
      },
    });
    if (!page)
      throw problem(400, `after names no job: ${after}`, [{ field: 'after', message: 'unknown id' }]);
    sendJson(res, 200, { items: page.items.map(toWireJob), totalItems: page.totalItems });
  });
}

/** What a payload job's sending event carries beyond the common fields. */
export function payloadEventFields(
  job: JobRecord,
  workflow: Workflow,
): { extraInfo: { name: string; value: unknown }[]; executionDateUtc: string | null; invoiceId?: string } {
  const payload = job.payload;
  const extraInfo = (payload?.extraInfoIdentifiers ?? []).map((e) => ({
    name: e.name,
    value: e.mustBeEncrypted || e.isEncrypted ? '[encrypted]' : e.value,
  }));
  const invoiceRef = payload?.channelIdentifiers.find((c) => c.kind === 'INVOICE_REFERENCE')?.value;
  return {
    extraInfo,
    executionDateUtc: job.sendingEventExecutionDateUtc ?? null,
    ...(workflow.invoiceConfiguration?.enableInvoiceTracking && invoiceRef ? { invoiceId: invoiceRef } : {}),
  };
}
