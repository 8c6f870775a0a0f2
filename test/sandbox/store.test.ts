import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/sandbox/store.js';

describe('sandbox store', () => {
  let dir: string;
  let store: Store;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'docex-store-'));
    store = new Store(join(dir, 'sandbox.db'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps records across a reopen of the same file', () => {
    store.insert('job', { id: 'job_1', status: 'AWAITING_FILE_UPLOAD' }, { companyId: 'c1' });
    store.close();
    store = new Store(join(dir, 'sandbox.db'));
    expect(store.get('job', 'job_1')).toEqual({ id: 'job_1', status: 'AWAITING_FILE_UPLOAD' });
  });

  it('pages in insertion order after the given id and counts the whole filtered list', () => {
    for (let i = 1; i <= 5; i++)
      store.insert('job', { id: `job_${i}` }, { companyId: i % 2 ? 'odd' : 'even' });
    const first = store.page('job', { companyId: 'odd', maxItems: 2 });
    expect(first?.items.map((r) => r.id)).toEqual(['job_1', 'job_3']);
    expect(first?.totalItems).toBe(3);
    const second = store.page('job', { companyId: 'odd', maxItems: 2, after: 'job_3' });
    expect(second?.items.map((r) => r.id)).toEqual(['job_5']);
  });

  it('answers undefined for a page after an id it does not hold', () => {
    store.insert('job', { id: 'job_1' });
    expect(store.page('job', { maxItems: 10, after: 'job_404' })).toBeUndefined();
  });

  it('filters by parent and applies the where predicate to items and total', () => {
    store.insert('se', { id: 'se_1', ok: true }, { parentId: 'job_1' });
    store.insert('se', { id: 'se_2', ok: false }, { parentId: 'job_1' });
    store.insert('se', { id: 'se_3', ok: true }, { parentId: 'job_2' });
    const page = store.page('se', { parentId: 'job_1', maxItems: 10, where: (r) => r['ok'] === true });
    expect(page).toEqual({ items: [{ id: 'se_1', ok: true }], totalItems: 1 });
  });

  it('counts with both a parent and a company filter the records of that company only', () => {
    store.insert('se', { id: 'se_1', companyId: 'c1' }, { companyId: 'c1', parentId: 'job_1' });
    store.insert('se', { id: 'se_2', companyId: 'c2' }, { companyId: 'c2', parentId: 'job_1' });
    store.insert('se', { id: 'se_3', companyId: 'c1' }, { companyId: 'c1', parentId: 'job_1' });
    const page = store.page('se', { parentId: 'job_1', companyId: 'c1', maxItems: 1 });
    expect(page?.items.map((r) => r.id)).toEqual(['se_1']);
    expect(page?.totalItems).toBe(2);
  });

  it('reads each record once for a filtered page, whatever page it is, and counts them all', () => {
    for (let i = 1; i <= 50; i++) store.insert('job', { id: `job_${i}`, n: i }, { companyId: 'c' });
    let calls = 0;
    const even = (r: Record<string, unknown>) => {
      calls++;
      return (r['n'] as number) % 2 === 0;
    };
    const page = store.page('job', { companyId: 'c', maxItems: 3, after: 'job_20', where: even });
    expect(page?.items.map((r) => r.id)).toEqual(['job_22', 'job_24', 'job_26']);
    expect(page?.totalItems).toBe(25);
    expect(calls).toBe(50);
  });

  it('replaces a record with put and removes it with delete', () => {
    store.insert('job', { id: 'job_1', status: 'A' });
    store.put('job', { id: 'job_1', status: 'B' });
    expect(store.get('job', 'job_1')).toEqual({ id: 'job_1', status: 'B' });
    expect(store.delete('job', 'job_1')).toBe(true);
    expect(store.get('job', 'job_1')).toBeUndefined();
    expect(store.delete('job', 'job_1')).toBe(false);
  });
});
