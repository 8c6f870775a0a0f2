import { isFinalSendingEvent, type Workflow } from '../../domain/wire.js';
import type { SandboxContext } from '../context.js';
import { parseMaxItems, problem, type Router, type SandboxRequest, sendJson } from '../http.js';
import type { Lifecycle } from '../lifecycle.js';
import { type BlobRecord, type JobRecord, type SendingEventRecord, toWireSendingEvent } from '../records.js';
import { callerOf, strictTimeParam } from './route-helpers.js';
import { WORKFLOW_KIND } from './workflows.js';

export function registerSendingEventRoutes(router: Router, ctx: SandboxContext, lifecycle: Lifecycle): void {
  const eventOf = (req: SandboxRequest): SendingEventRecord => {
    const caller = callerOf(req);
    const id = req.params['id'] ?? '';
    const event = ctx.store.get<SendingEventRecord>('sending-event', id);
    if (!event || event.companyId !== caller.companyId)
      throw problem(404, `sending event ${id} does not exist`);
    return event;
  };

  router.add('GET', '/sending-events/:id', (req, res) => {
    sendJson(res, 200, toWireSendingEvent(eventOf(req)));
  });

  router.add('GET', '/sending-events', (req, res) => {
    const caller = callerOf(req);
    const maxItems = parseMaxItems(req.query);
    const from = strictTimeParam(req.query, 'from');
    const until = strictTimeParam(req.query, 'until');
    const businessStatus = req.query.get('businessStatus') ?? undefined;
    const jobId = req.query.get('jobId') ?? undefined;
    const after = req.query.get('after') ?? undefined;
    const filtered = from !== undefined || until !== undefined || businessStatus !== undefined;
    const page = ctx.store.page<SendingEventRecord>('sending-event', {
      companyId: caller.companyId,
      ...(jobId !== undefined ? { parentId: jobId } : {}),
      ...(after !== undefined ? { after } : {}),
      maxItems,
      // Without a filter the store counts in SQL instead of reading every record.
      ...(filtered
        ? {
            where: (r) => {
              const e = r as SendingEventRecord;
              const start = Date.parse(e.startDate);
              return (
                (from === undefined || start > from) &&
                (until === undefined || start < until) &&
                (businessStatus === undefined || e.businessStatus === businessStatus)
              );
            },
          }
        : {}),
    });
    if (!page)
      throw problem(400, `after names no sending event: ${after}`, [
        { field: 'after', message: 'unknown id' },
      ]);
    sendJson(res, 200, { items: page.items.map(toWireSendingEvent), totalItems: page.totalItems });
  });

  router.add('POST', '/sending-events/:id/resend', (req, res) => {
    const source = eventOf(req);
    if (source.resendOf) throw problem(409, `sending event ${source.id} is itself a re-send`);
    if (!isFinalSendingEvent(source) || lifecycle.isFinalizing(source.id)) {
      throw problem(409, `sending event ${source.id} is not in a final state`);
    }
    const job = ctx.store.get<JobRecord>('job', source.jobId);
    const workflow = ctx.store.get<Workflow & { id: string }>(WORKFLOW_KIND, source.workflowId);
    const original = source.documents.find((d) => d.type === 'ORIGINAL');
    const blob = original ? ctx.store.get<BlobRecord>('blob', original.fileReference) : undefined;
    if (!job || !workflow || !blob) throw problem(409, `sending event ${source.id} can no longer be re-sent`);
    const resent = lifecycle.createEvent({
      job,
      workflow,
      item: {
        sourceRef: source.sendingSourceFileReference,
        recipient: source.recipient,
        outcomeHint: source.outcomeHint,
        // The same document: a recipient missing from it is missing again.
        ...(source.outcomeError ? { failure: source.outcomeError } : {}),
      },
      original: blob,
      extraInfo: source.extraInfo,
      ...(source.invoiceId ? { invoiceId: source.invoiceId } : {}),
      resendOf: source.id,
    });
    ctx.log.info({ sendingEventId: resent.id, resendOf: source.id, jobId: job.id }, 'sending event re-sent');
    sendJson(res, 201, toWireSendingEvent(resent));
  });

  router.add('GET', '/sending-events/:id/files/:fileReference/download-url', (req, res) => {
    const event = eventOf(req);
    const ref = req.params['fileReference'] ?? '';
    const doc = event.documents.find((d) => d.fileReference === ref);
    if (!doc) throw problem(404, `sending event ${event.id} has no file ${ref}`);
    const expiresAt = ctx.clock.now() + ctx.settings.downloadUrlValidityMs;
    sendJson(res, 200, {
      url: ctx.signer.sign(`/download/${encodeURIComponent(doc.fileReference)}`, expiresAt),
      expiresAt: new Date(expiresAt).toISOString(),
    });
  });
}
