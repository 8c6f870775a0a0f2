/** GET /workflows and /workflows/{id}: read-only, the caller's company (or the managed one). */
import { kindName, type NamesProfile } from '../../domain/names-profile.js';
import type { RouteModule } from '../context.js';
import { sendJson } from '../http.js';
import type { StoredRecord } from '../store.js';
import { companyPage, ownRecord } from './route-helpers.js';

export const WORKFLOW_KIND = 'workflow';

/** A workflow as the API answers it: its input source's identifier kinds spelt as the profile says. */
function toWireWorkflow(record: StoredRecord, names: NamesProfile): StoredRecord {
  const source = record['inputSource'] as { channelIdentifiers?: unknown } | undefined;
  if (!source || !Array.isArray(source.channelIdentifiers)) return record;
  const channelIdentifiers = source.channelIdentifiers.map((id: { kind?: unknown }) =>
    typeof id?.kind === 'string' ? { ...id, kind: kindName(id.kind, names) } : id,
  );
  return { ...record, inputSource: { ...source, channelIdentifiers } };
}

export const registerWorkflowRoutes: RouteModule = (router, ctx) => {
  router.add('GET', '/workflows', (req, res) => {
    const page = companyPage(ctx.store, WORKFLOW_KIND, req);
    sendJson(res, 200, { ...page, items: page.items.map((w) => toWireWorkflow(w, ctx.settings.names)) });
  });
  router.add('GET', '/workflows/:id', (req, res) => {
    const record = ownRecord(ctx.store, WORKFLOW_KIND, req.params['id'] ?? '', req, 'workflow');
    sendJson(res, 200, toWireWorkflow(record, ctx.settings.names));
  });
};
