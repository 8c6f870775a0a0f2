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
  cursor?: string | undefined;
  maxItems?: number;
}

const usageDetailsPageSchema = z.looseObject({
  items: z.array(usageEventSchema),
  nextCursor: z.string().optional().nullable(),
});

/** One page of usage details: Interface A's `/usage/details` or Interface B's `/api/usage/details`. */
export async function fetchUsageDetails(
  caller: ApiCaller,
  route: string,
  query: UsageDetailsQuery,
  options?: CallOptions,
): Promise<CursorPage<UsageEvent>> {
  const page = await caller.call(
    {
      method: 'GET',
      route,
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
    usageDetailsPageSchema,
  );
  return { items: page.items, nextCursor: page.nextCursor ?? undefined };
}

/** Every usage event of `query`, page by page along nextCursor. */
export function iterateUsageDetails(
  caller: ApiCaller,
  route: string,
  query: Omit<UsageDetailsQuery, 'cursor'>,
  options?: CallOptions,
): AsyncGenerator<UsageEvent, void, undefined> {
  return iterateCursor<UsageEvent>(
    (cursor) => fetchUsageDetails(caller, route, { ...query, cursor }, options),
    { route },
  );
}

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

  details(query: UsageDetailsQuery, options?: CallOptions): Promise<CursorPage<UsageEvent>> {
    return fetchUsageDetails(this.caller, '/usage/details', query, options);
  }

  iterateDetails(query: Omit<UsageDetailsQuery, 'cursor'>, options?: CallOptions) {
    return iterateUsageDetails(this.caller, '/usage/details', query, options);
  }
}
