/**
 * Interface B reports: a report is generated at once from the company's usage events or sending
 * events into a CSV blob, served by the files host behind a pre-signed URL (decisions, Reports).
 */

import { rmSync } from 'node:fs';
import path from 'node:path';
import { isoTime } from '../../core/clock.js';
import { saveBlob } from '../blobs.js';
import type { SandboxContext } from '../context.js';
import { problem, readJson, type SandboxRequest, sendJson } from '../http.js';
import type { BlobRecord } from '../records.js';
import { parseBody } from '../routes/route-helpers.js';
import { USAGE_EVENT_KIND } from '../routes/usage-query.js';
import type { StoredRecord } from '../store.js';
import { reportCreateBody, reportSearchBody } from './admin-schemas.js';
import type { RouteAdder } from './admin-scope.js';
import { administrableCompany, recordOfCompany, sameCompany } from './admin-scope.js';
import { type ReportType, reportCsv } from './report-csv.js';

export const REPORT_KIND = 'report';

export interface ReportRecord extends StoredRecord {
  companyId: string;
  departmentId?: string | undefined;
  reportType: ReportType;
  status: 'PENDING' | 'READY' | 'FAILED';
  from: string;
  until: string;
  fileName: string;
  createdAt: string;
  /** Internal: the CSV's blob; never on the wire. */
  blobId: string;
}

export function toWireReport(record: ReportRecord) {
  const { blobId: _b, ...wire } = record;
  return wire;
}

interface ReportQuery {
  companyId: string;
  departmentId?: string | undefined;
  reportType: ReportType;
  from: string;
  until: string;
}

function rowsFor(ctx: SandboxContext, report: ReportQuery) {
  const from = Date.parse(report.from);
  const until = Date.parse(report.until);
  const inRange = (time: unknown) => {
    const t = typeof time === 'string' ? Date.parse(time) : Number.NaN;
    return t >= from && t < until;
  };
  const inDepartment = (r: StoredRecord) =>
    report.departmentId === undefined || r['departmentId'] === report.departmentId;
  const filter = { companyId: report.companyId };
  if (report.reportType === 'USAGE') {
    return ctx.store.list(USAGE_EVENT_KIND, filter).filter((r) => inRange(r['timestamp']) && inDepartment(r));
  }
  const events = ctx.store
    .list('sending-event', filter)
    .filter((r) => inRange(r['startDate']) && inDepartment(r));
  return report.reportType === 'INVOICES' ? events.filter((r) => typeof r['invoiceId'] === 'string') : events;
}

function signedUrl(ctx: SandboxContext, blobId: string) {
  const expiresAt = ctx.clock.now() + ctx.settings.downloadUrlValidityMs;
  return { url: ctx.signer.sign(`/download/${blobId}`, expiresAt), expiresAt: isoTime(expiresAt) };
}

function companyOf(ctx: SandboxContext, req: SandboxRequest): string {
  return administrableCompany(ctx, req, req.params['companyId'] ?? '').id;
}

export function registerReportRoutes(router: RouteAdder, ctx: SandboxContext): void {
  const base = '/api/company/:companyId/reports';
  router.add('POST', base, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const body = parseBody(reportCreateBody, await readJson(req.raw));
    sameCompany(companyId, body.companyId);
    if (Date.parse(body.from) >= Date.parse(body.until)) {
      throw problem(400, 'invalid date range: from must be before until');
    }
    if (body.departmentId !== undefined) recordOfCompany(ctx, 'department', companyId, body.departmentId);
    const id = body.id ?? ctx.newId('rep');
    if (ctx.store.get(REPORT_KIND, id)) throw problem(409, `report ${id} already exists`);
    const base = { ...body, id, companyId, createdAt: isoTime(ctx.clock.now()) };
    const fileName = `${body.reportType.toLowerCase()}-${id}.csv`;
    const csv = reportCsv(body.reportType, rowsFor(ctx, base));
    const blob = saveBlob(ctx, { name: fileName, contentType: 'text/csv', data: Buffer.from(csv, 'utf8') });
    const report: ReportRecord = { ...base, status: 'READY', fileName, blobId: blob.id };
    ctx.store.insert(REPORT_KIND, report, { companyId });
    ctx.log.info({ reportId: id, companyId, reportType: body.reportType }, 'admin: report created');
    sendJson(res, 201, { id, ...signedUrl(ctx, blob.id) });
  });

  router.add('POST', `${base}/search`, async (req, res) => {
    const companyId = companyOf(ctx, req);
    const q = parseBody(reportSearchBody, await readJson(req.raw));
    const items = ctx.store
      .list<ReportRecord>(REPORT_KIND, { companyId })
      .filter(
        (r) =>
          (q.reportType === undefined || r.reportType === q.reportType) &&
          (q.departmentId === undefined || r.departmentId === q.departmentId) &&
          (q.from === undefined || Date.parse(r.from) >= Date.parse(q.from)) &&
          (q.until === undefined || Date.parse(r.until) <= Date.parse(q.until)),
      )
      .map(toWireReport);
    sendJson(res, 200, { items });
  });

  router.add('GET', `${base}/:id`, (req, res) => {
    const report = recordOfCompany<ReportRecord>(
      ctx,
      REPORT_KIND,
      companyOf(ctx, req),
      req.params['id'] ?? '',
    );
    sendJson(res, 200, toWireReport(report));
  });

  router.add('GET', `${base}/:id/download-url`, (req, res) => {
    const report = recordOfCompany<ReportRecord>(
      ctx,
      REPORT_KIND,
      companyOf(ctx, req),
      req.params['id'] ?? '',
    );
    if (report.status !== 'READY') throw problem(409, `report ${report.id} is ${report.status}`);
    // The specification answers a bare string here, not the {url, expiresAt} record.
    sendJson(res, 200, signedUrl(ctx, report.blobId).url);
  });

  router.add('DELETE', `${base}/:id`, (req, res) => {
    const report = recordOfCompany<ReportRecord>(
      ctx,
      REPORT_KIND,
      companyOf(ctx, req),
      req.params['id'] ?? '',
    );
    const blob = ctx.store.get<BlobRecord>('blob', report.blobId);
    ctx.store.transaction(() => {
      ctx.store.delete(REPORT_KIND, report.id);
      if (blob) ctx.store.delete('blob', blob.id);
    });
    if (blob) rmSync(path.join(ctx.blobDir, blob.file), { force: true });
    sendJson(res, 200, { success: true });
  });
}
