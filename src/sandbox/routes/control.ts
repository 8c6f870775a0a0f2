import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import { isDocexError } from '../../core/errors.js';
import { jobStatusName } from '../../domain/names-profile.js';
import { isFinalSendingEvent } from '../../domain/wire.js';
import { blobPath } from '../blobs.js';
import type { SandboxContext } from '../context.js';
import { type FaultInjector, faultSchema } from '../faults.js';
import { problem, type Router, sendJson } from '../http.js';
import type { Lifecycle } from '../lifecycle.js';
import { PEPPOL_DOCUMENT_KIND } from '../peppol-documents.js';
import { renderProofPdf } from '../proofs.js';
import type { BlobRecord, JobRecord, SendingEventRecord } from '../records.js';
import { WEBHOOK_KIND } from '../webhook-dispatcher.js';
import { readJsonBody } from './route-helpers.js';
import { USAGE_EVENT_KIND } from './usage-query.js';
import { WORKFLOW_KIND } from './workflows.js';

/**
 * The sandbox's own control API under /_sandbox/ on the files host, for tests and demos: look at
 * jobs as the service saw them, inject faults, move the clock, force outcomes. Loopback callers only.
 */
export interface ControlDeps {
  lifecycle: Lifecycle;
  faults: FaultInjector;
  advanceClock(ms: number): Promise<void>;
  /** Injects an incoming Peppol document; absent when the Peppol part is not available. */
  addPeppolDocument?: (xml: string) => unknown;
}

const outcomeSchema = z.object({ businessStatus: z.enum(['SUCCESS', 'FAILURE', 'REJECTED']) });
const advanceSchema = z.object({ ms: z.number().int().min(0) });
const peppolSchema = z.object({ xml: z.string().min(1) });

export function registerControlRoutes(router: Router, ctx: SandboxContext, deps: ControlDeps): void {
  router.add('GET', '/_sandbox/jobs', (_req, res) => {
    const items = [...ctx.store.iterate<JobRecord>('job')].map((job) => ({
      id: job.id,
      name: job.name,
      workflowId: job.workflowId,
      companyId: job.companyId,
      filename: job.filename,
      status: jobStatusName(job.status, ctx.settings.names),
      createdAt: job.createdAt,
      uploadedSize: job.upload?.size ?? null,
      uploadedMd5: job.upload?.md5 ?? null,
      sendingEventCount: job.sendingEventCount,
      errorList: job.errorList,
    }));
    sendJson(res, 200, { items, totalItems: items.length });
  });

  // Every sending event with its documents; the generated ones (proofs, reports) with their MD5,
  // so a test can compare what an agent wrote with what the service holds.
  router.add('GET', '/_sandbox/sending-events', async (_req, res) => {
    const items = [];
    // Read whole first: the store's cursor must not stay open across the awaits below.
    for (const event of [...ctx.store.iterate<SendingEventRecord>('sending-event')]) {
      const documents = [];
      for (const d of event.documents) {
        const blob = d.type === 'ORIGINAL' ? undefined : ctx.store.get<BlobRecord>('blob', d.fileReference);
        documents.push({
          type: d.type,
          fileReference: d.fileReference,
          size: d.size,
          md5: blob ? await blobMd5(ctx, blob) : null,
        });
      }
      items.push({
        id: event.id,
        jobId: event.jobId,
        businessStatus: event.businessStatus,
        status: event.status,
        final: isFinalSendingEvent(event),
        documents,
      });
    }
    sendJson(res, 200, { items, totalItems: items.length });
  });

  router.add('GET', '/_sandbox/state', (_req, res) => {
    const counts: Record<string, number> = {};
    for (const kind of [
      'job',
      'sending-event',
      'blob',
      WORKFLOW_KIND,
      'company',
      WEBHOOK_KIND,
      USAGE_EVENT_KIND,
      PEPPOL_DOCUMENT_KIND,
    ]) {
      counts[kind] = ctx.store.count(kind);
    }
    const byBusinessStatus: Record<string, number> = {};
    let active = 0;
    for (const event of ctx.store.iterate<SendingEventRecord>('sending-event')) {
      byBusinessStatus[event.businessStatus] = (byBusinessStatus[event.businessStatus] ?? 0) + 1;
      if (!isFinalSendingEvent(event)) active++;
    }
    sendJson(res, 200, {
      time: new Date(ctx.clock.now()).toISOString(),
      counts,
      sendingEvents: { active, byBusinessStatus },
      faults: deps.faults.list(),
      answersDropped: deps.faults.answersDropped,
      settings: ctx.settings,
    });
  });

  router.add('GET', '/_sandbox/faults', (_req, res) => {
    sendJson(res, 200, { items: deps.faults.list() });
  });

  router.add('POST', '/_sandbox/faults', async (req, res) => {
    const fault = await readJsonBody(req, faultSchema);
    deps.faults.add(fault);
    ctx.log.info({ fault }, 'fault injected');
    sendJson(res, 201, { items: deps.faults.list() });
  });

  router.add('DELETE', '/_sandbox/faults', (_req, res) => {
    deps.faults.clear();
    ctx.log.info('faults cleared');
    sendJson(res, 200, { items: [] });
  });

  router.add('POST', '/_sandbox/clock/advance', async (req, res) => {
    const { ms } = await readJsonBody(req, advanceSchema);
    await deps.advanceClock(ms);
    sendJson(res, 200, { time: new Date(ctx.clock.now()).toISOString() });
  });

  router.add('POST', '/_sandbox/sending-events/:id/outcome', async (req, res) => {
    const { businessStatus } = await readJsonBody(req, outcomeSchema);
    const id = req.params['id'] ?? '';
    const event = ctx.store.get<SendingEventRecord>('sending-event', id);
    if (!event) throw problem(404, `sending event ${id} does not exist`);
    if (isFinalSendingEvent(event) || deps.lifecycle.isFinalizing(id))
      throw problem(409, `sending event ${id} is already final`);
    ctx.store.put('sending-event', { ...event, forcedOutcome: businessStatus });
    ctx.log.info({ sendingEventId: id, businessStatus }, 'outcome forced');
    sendJson(res, 200, { id, forcedOutcome: businessStatus });
  });

  const addPeppol = deps.addPeppolDocument;
  if (addPeppol) {
    router.add('POST', '/_sandbox/peppol-documents', async (req, res) => {
      const { xml } = await readJsonBody(req, peppolSchema);
      let added: unknown;
      try {
        added = addPeppol(xml);
      } catch (err) {
        if (isDocexError(err)) throw problem(400, err.message);
        throw err;
      }
      sendJson(res, 201, added);
    });
  }
}

async function blobMd5(ctx: SandboxContext, blob: BlobRecord): Promise<string> {
  const hash = createHash('md5');
  // A proof has no file: it is rendered at each download, the same bytes each time.
  if (blob.proof) return hash.update(renderProofPdf(blob.proof)).digest('hex');
  const start = blob.offset ?? 0;
  if (blob.size === 0) return hash.digest('hex');
  for await (const chunk of createReadStream(blobPath(ctx, blob), { start, end: start + blob.size - 1 })) {
    hash.update(chunk as Buffer);
  }
  return hash.digest('hex');
}
