/** Interface B news items: create and delete only (the specification shows no read). */

import { isoTime } from '../../core/clock.js';
import type { SandboxContext } from '../context.js';
import { problem, readJson, sendJson } from '../http.js';
import { callerOf, parseBody } from '../routes/route-helpers.js';
import { newsItemCreateBody } from './admin-schemas.js';
import type { RouteAdder } from './admin-scope.js';

export const NEWS_ITEM_KIND = 'news-item';

export function registerNewsItemRoutes(router: RouteAdder, ctx: SandboxContext): void {
  router.add('POST', '/api/news-items', async (req, res) => {
    const body = parseBody(newsItemCreateBody, await readJson(req.raw));
    if (
      body.publishFrom &&
      body.publishUntil &&
      Date.parse(body.publishFrom) >= Date.parse(body.publishUntil)
    ) {
      throw problem(400, 'publishFrom must be before publishUntil', [
        { field: 'publishUntil', message: 'must be after publishFrom' },
      ]);
    }
    const companyId = callerOf(req).ownCompanyId;
    const item = { ...body, id: ctx.newId('news'), createdAt: isoTime(ctx.clock.now()) };
    ctx.store.insert(NEWS_ITEM_KIND, { ...item, companyId }, { companyId });
    sendJson(res, 201, item);
  });

  router.add('DELETE', '/api/news-items/:id', (req, res) => {
    const id = req.params['id'] ?? '';
    const item = ctx.store.get(NEWS_ITEM_KIND, id);
    if (!item || item['companyId'] !== callerOf(req).ownCompanyId) {
      throw problem(404, `news item ${id} does not exist`);
    }
    ctx.store.delete(NEWS_ITEM_KIND, id);
    sendJson(res, 200, { success: true });
  });
}
