import { describe, expect, it } from 'vitest';
import { iterateAfter, type Page } from '../../src/api/pagination.js';
import { caught } from './support/caught.js';
import { collect } from './support/collect.js';

interface Item {
  id: string;
}

/** A list served page by page; `onPage` may change it between pages, as expiring jobs do. */
function listServer(items: Item[], options: { shortPageMax?: number; onPage?: (n: number) => void } = {}) {
  const afters: (string | undefined)[] = [];
  const fetchPage = async (after: string | undefined, maxItems: number): Promise<Page<Item>> => {
    afters.push(after);
    options.onPage?.(afters.length);
    const start = after === undefined ? 0 : items.findIndex((i) => i.id === after) + 1;
    const take = Math.min(maxItems, options.shortPageMax ?? maxItems);
    return { items: items.slice(start, start + take), totalItems: items.length };
  };
  return { fetchPage, afters };
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `job_${i + 1}` }));

describe('iterateAfter', () => {
  it('yields every item when totalItems shrinks during the walk and pages are short', async () => {
    const items = ids(7);
    // After the second page two early jobs expire: totalItems drops from 7 to 5 while job_5..7
    // are still unread, and the server answers at most 2 of the 3 asked.
    const server = listServer(items, {
      shortPageMax: 2,
      onPage: (n) => {
        if (n === 3) items.splice(0, 2);
      },
    });
    const seen = await collect(iterateAfter(server.fetchPage, { pageSize: 3, route: '/jobs' }));
    expect(seen.map((i) => i.id)).toEqual(['job_1', 'job_2', 'job_3', 'job_4', 'job_5', 'job_6', 'job_7']);
    expect(server.afters).toEqual([undefined, 'job_2', 'job_4', 'job_6', 'job_7']);
  });

  it('stops after one empty page on an empty list', async () => {
    const server = listServer([]);
    expect(await collect(iterateAfter(server.fetchPage, { route: '/jobs' }))).toEqual([]);
    expect(server.afters).toEqual([undefined]);
  });

  it('fails with DOCEX_RESPONSE_INVALID when pages cycle instead of advancing', async () => {
    const pages = [[{ id: 'a' }], [{ id: 'b' }], [{ id: 'a' }], [{ id: 'b' }]];
    let n = 0;
    const fetchPage = async (): Promise<Page<Item>> => ({ items: pages[n++ % pages.length]! });
    const err = await caught(collect(iterateAfter(fetchPage, { route: '/jobs' })));
    expect(err.code).toBe('DOCEX_RESPONSE_INVALID');
    expect(n).toBe(3);
  });
});
