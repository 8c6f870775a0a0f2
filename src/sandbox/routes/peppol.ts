/**
 * Incoming Peppol documents: list (sorted and filtered on createdAt or lastModifiedAt), one
 * document, and a 10-minute pre-signed download URL of its UBL XML on the files host.
 */
import { isoTime } from '../../core/clock.js';
import type { RouteModule } from '../context.js';
import { parseMaxItems, problem, type SandboxRequest, sendJson } from '../http.js';
import {
  PEPPOL_DOCUMENT_KIND,
  type PeppolDocumentRecord,
  peppolDownloadPath,
  toWirePeppolDocument,
} from '../peppol-documents.js';
import type { Store } from '../store.js';
import { callerOf, parseTimeParam } from './route-helpers.js';

const SORT_FIELDS = ['createdAt', 'lastModifiedAt'] as const;
const SORT_ORDERS = ['asc', 'desc'] as const;

function oneOf<T extends string>(req: SandboxRequest, name: string, allowed: readonly T[], fallback: T): T {
  const raw = req.query.get(name);
  if (raw === null) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw problem(400, `query parameter ${name} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

function listDocuments(store: Store, req: SandboxRequest) {
  const sortField = oneOf(req, 'sortField', SORT_FIELDS, 'createdAt');
  const sortOrder = oneOf(req, 'sortOrder', SORT_ORDERS, 'desc');
  const from = parseTimeParam(req.query, 'from');
  const until = parseTimeParam(req.query, 'until');
  if (from !== undefined && until !== undefined && from > until) throw problem(400, 'from is after until');
  const maxItems = parseMaxItems(req.query);
  const after = req.query.get('after');

  const all = store
    .list<PeppolDocumentRecord>(PEPPOL_DOCUMENT_KIND, { companyId: callerOf(req).companyId })
    .filter((d) => {
      const t = Date.parse(String(d[sortField]));
      return (from === undefined || t >= from) && (until === undefined || t < until);
    });
  // Stable: ties keep insertion order (ascending), reversed as a whole for desc.
  const sorted = all
    .map((d, seq) => ({ d, seq, t: Date.parse(String(d[sortField])) }))
    .sort((a, b) => a.t - b.t || a.seq - b.seq)
    .map((x) => x.d);
  if (sortOrder === 'desc') sorted.reverse();
  let start = 0;
  if (after !== null) {
    const index = sorted.findIndex((d) => d.id === after);
    if (index < 0) throw problem(400, `after "${after}" names no item of this list`);
    start = index + 1;
  }
  return {
    items: sorted.slice(start, start + maxItems).map(toWirePeppolDocument),
    totalItems: sorted.length,
  };
}

function findDocument(store: Store, req: SandboxRequest): PeppolDocumentRecord {
  const id = req.params['id'] ?? '';
  const doc = store.get<PeppolDocumentRecord>(PEPPOL_DOCUMENT_KIND, id);
  // Another company's document or another sender: as unknown, so ids of others do not leak.
  if (!doc || doc.companyId !== callerOf(req).companyId || doc.senderId !== req.params['senderId']) {
    throw problem(404, `no incoming document ${id} from sender ${req.params['senderId']}`);
  }
  return doc;
}

export const registerPeppolRoutes: RouteModule = (router, ctx) => {
  router.add('GET', '/peppol-incoming-documents', (req, res) => {
    sendJson(res, 200, listDocuments(ctx.store, req));
  });
  router.add('GET', '/peppol-incoming-documents/sender/:senderId/document/:id', (req, res) => {
    sendJson(res, 200, toWirePeppolDocument(findDocument(ctx.store, req)));
  });
  router.add('GET', '/peppol-incoming-documents/sender/:senderId/document/:id/download-url', (req, res) => {
    const doc = findDocument(ctx.store, req);
    const expiresAt = ctx.clock.now() + ctx.settings.downloadUrlValidityMs;
    const url = ctx.signer.sign(peppolDownloadPath(doc.id), expiresAt);
    ctx.log.info({ documentId: doc.id }, 'peppol download url issued');
    sendJson(res, 200, { url, expiresAt: isoTime(expiresAt) });
  });
};
