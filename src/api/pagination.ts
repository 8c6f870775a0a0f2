import { API_ERROR_CODES, ApiError } from './errors.js';

/** `{items, totalItems}` page of Interface A lists. */
export interface Page<T> {
  items: T[];
  totalItems?: number | undefined;
}

export type FetchAfterPage<T> = (after: string | undefined, maxItems: number) => Promise<Page<T>>;

/**
 * Walks an `after`/`maxItems` list. The service may answer fewer items than asked, so a short
 * page is not the end: only an empty page, or having seen `totalItems`, is.
 */
export async function* iterateAfter<T extends { id: string }>(
  fetchPage: FetchAfterPage<T>,
  options: { pageSize?: number; after?: string; route: string },
): AsyncGenerator<T, void, undefined> {
  const pageSize = options.pageSize ?? 100;
  let after = options.after;
  let seen = 0;
  for (;;) {
    const page = await fetchPage(after, pageSize);
    if (page.items.length === 0) return;
    for (const item of page.items) yield item;
    seen += page.items.length;
    if (page.totalItems !== undefined && seen >= page.totalItems) return;
    const last = page.items[page.items.length - 1]!.id;
    // A server that ignores `after` would loop forever; stop loudly instead.
    if (last === after) {
      throw new ApiError(
        API_ERROR_CODES.responseInvalid,
        `GET ${options.route}: pagination did not advance`,
        {
          method: 'GET',
          route: options.route,
        },
      );
    }
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
