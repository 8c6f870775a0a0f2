import { API_ERROR_CODES, ApiError } from './errors.js';

/** `{items, totalItems}` page of Interface A lists. */
export interface Page<T> {
  items: T[];
  totalItems?: number | undefined;
}

export type FetchAfterPage<T> = (after: string | undefined, maxItems: number) => Promise<Page<T>>;

/**
 * Walks an `after`/`maxItems` list until a page comes back empty. Nothing else proves the end:
 * the service may answer fewer items than asked, and `totalItems` shrinks during a walk when
 * waiting jobs expire, so counting against it would skip the last items. The price is one empty
 * page per walk. A server that ignores `after` is caught by the check below, so this never loops.
 */
export async function* iterateAfter<T extends { id: string }>(
  fetchPage: FetchAfterPage<T>,
  options: { pageSize?: number; after?: string; route: string },
): AsyncGenerator<T, void, undefined> {
  const pageSize = options.pageSize ?? 100;
  let after = options.after;
  const lastIds = new Set<string>();
  for (;;) {
    const page = await fetchPage(after, pageSize);
    if (page.items.length === 0) return;
    for (const item of page.items) yield item;
    const last = page.items[page.items.length - 1]!.id;
    // A server that ignores `after` (or cycles) would loop forever; stop loudly instead.
    if (last === after || lastIds.has(last)) {
      throw new ApiError(
        API_ERROR_CODES.responseInvalid,
        `GET ${options.route}: pagination did not advance`,
        {
          method: 'GET',
          route: options.route,
        },
      );
    }
    lastIds.add(last);
    after = last;
  }
}

/** `{items, nextCursor?}` pages of usage details: the last page has no nextCursor. */
export interface CursorPage<T> {
  items: T[];
  nextCursor?: string | undefined;
}

export async function* iterateCursor<T>(
  fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>,
  options: { route: string },
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    for (const item of page.items) yield item;
    if (!page.nextCursor) return;
    if (page.nextCursor === cursor) {
      throw new ApiError(API_ERROR_CODES.responseInvalid, `GET ${options.route}: cursor did not advance`, {
        method: 'GET',
        route: options.route,
      });
    }
    cursor = page.nextCursor;
  }
}
