import { z } from 'zod';
import { usageEventSchema, usageSchema } from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { type CursorPage, iterateCursor } from './pagination.js';
import { type DateInput, formatDateTime } from './query.js';

export type Usage = z.infer<typeof usageSchema>;
export type UsageEvent = z.infer<typeof usageEventSchema>;

export interface UsageDetailsQuery {
  from: DateInput;
  /** Exclusive end. */
  until: DateInput;
  companyId?: string;
  /** Only department-scoped usage of these departments; company-level usage is left out. */
  departmentIds?: string[];
  cursor?: string;
  maxItems?: number;
}

const detailsPage = z.looseObject({
  items: z.array(usageEventSchema),
  nextCursor: z.string().optional().nullable(),
});

export class UsageApi {
  constructor(private readonly caller: ApiCaller) {}

  get(
    query: { from: DateInput; until: DateInput; departmentId?: string },
    options?: CallOptions,
  ): Promise<Usage> {
    return this.caller.call(
      {
        method: 'GET',
        route: '/usage',
        query: {
          from: formatDateTime(query.from, 'from'),
          until: formatDateTime(query.until, 'until'),
          departmentId: query.departmentId,
        },
        options,
      },
      usageSchema,
    );
  }

  async details(query: UsageDetailsQuery, options?: CallOptions): Promise<CursorPage<UsageEvent>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/usage/details',
        query: {
          from: formatDateTime(query.from, 'from'),
          until: formatDateTime(query.until, 'until'),
          companyId: query.companyId,
          departmentIds: query.departmentIds,
          cursor: query.cursor,
          maxItems: query.maxItems,
        },
        options,
      },
      detailsPage,
    );
    return { items: page.items, nextCursor: page.nextCursor ?? undefined };
  }

  iterateDetails(query: Omit<UsageDetailsQuery, 'cursor'>, options?: CallOptions) {
    return iterateCursor<UsageEvent>((cursor) => this.details({ ...query, cursor }, options), {
      route: '/usage/details',
    });
  }
}
