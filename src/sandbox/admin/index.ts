/**
 * Interface B, the partner administration API, on its own host: server TLS only (no client
 * certificate), a token endpoint for the partner-admin client, and every path under /api.
 */
import { isoTime } from '../../core/clock.js';
import { createTokenHandler } from '../auth.js';
import type { SandboxContext } from '../context.js';
import { type Handler, type Router, sendJson } from '../http.js';
import { usageDetails } from '../routes/usage-query.js';
import { ADMIN_TOKEN_KIND, type AdminCredentials, authenticateAdmin } from './admin-auth.js';
import { registerAdminCompanyRoutes } from './admin-companies.js';
import { registerAdminPeopleRoutes } from './admin-people.js';
import { administrableIds, type RouteAdder } from './admin-scope.js';
import { registerNewsItemRoutes } from './news-items.js';
import { registerReportRoutes } from './reports.js';

export { type AdminCredentials, loadAdminCredentials } from './admin-auth.js';

export const ADMIN_API_NAME = 'Document Exchange Service partner administration (sandbox)';
export const ADMIN_API_VERSION = '1.0';

export interface AdminRouteDeps {
  credentials: AdminCredentials;
  /** The partner's API key: the same x-api-key as Interface A. */
  apiKey: string;
}

export function registerAdminRoutes(router: Router, ctx: SandboxContext, deps: AdminRouteDeps): void {
  router.add('POST', '/oauth2/token', createTokenHandler(ctx, deps.credentials, ADMIN_TOKEN_KIND));
  const guarded: RouteAdder = {
    add(method: string, pattern: string, handler: Handler) {
      return router.add(method, pattern, (req, res) => {
        req.caller = authenticateAdmin(ctx, deps.apiKey, req);
        return handler(req, res);
      });
    },
  };
  guarded.add('GET', '/api', (_req, res) => {
    sendJson(res, 200, { name: ADMIN_API_NAME, version: ADMIN_API_VERSION, time: isoTime(ctx.clock.now()) });
  });
  registerAdminCompanyRoutes(guarded, ctx);
  registerAdminPeopleRoutes(guarded, ctx);
  registerReportRoutes(guarded, ctx);
  registerNewsItemRoutes(guarded, ctx);
  guarded.add('GET', '/api/usage/details', (req, res) => {
    sendJson(res, 200, usageDetails(ctx, req, administrableIds(ctx, req)));
  });
}
