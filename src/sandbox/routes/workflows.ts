/** GET /workflows and /workflows/{id}: read-only, the caller's company (or the managed one). */
import type { RouteModule } from '../context.js';
import { sendJson } from '../http.js';
import { companyPage, ownRecord } from './route-helpers.js';

export const WORKFLOW_KIND = 'workflow';

export const registerWorkflowRoutes: RouteModule = (router, ctx) => {
  router.add('GET', '/workflows', (req, res) => {
    sendJson(res, 200, companyPage(ctx.store, WORKFLOW_KIND, req));
  });
  router.add('GET', '/workflows/:id', (req, res) => {
    sendJson(res, 200, ownRecord(ctx.store, WORKFLOW_KIND, req.params['id'] ?? '', req, 'workflow'));
  });
};
