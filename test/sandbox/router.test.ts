import { describe, expect, it } from 'vitest';
import { HttpProblem, parseMaxItems, Router } from '../../src/sandbox/http.js';

describe('sandbox router', () => {
  const noop = () => undefined;
  const router = new Router()
    .add('GET', '/jobs/:id', noop)
    .add('POST', '/jobs/single-file', noop)
    .add('GET', '/sending-events/:id/files/:fileReference/download-url', noop);

  it('extracts decoded path parameters', () => {
    const m = router.match('GET', '/sending-events/se_1/files/proof%2F1.pdf/download-url');
    expect(m?.params).toEqual({ id: 'se_1', fileReference: 'proof/1.pdf' });
    expect(m?.route.pattern).toBe('/sending-events/:id/files/:fileReference/download-url');
  });

  it('answers 405 for a known path with another method and undefined for an unknown path', () => {
    expect(() => router.match('DELETE', '/jobs/j1')).toThrowError(HttpProblem);
    expect(router.match('GET', '/nope')).toBeUndefined();
  });

  it('takes maxItems from 1 to 1000, defaults to 100 and rejects anything else with 400', () => {
    expect(parseMaxItems(new URLSearchParams())).toBe(100);
    expect(parseMaxItems(new URLSearchParams('maxItems=1000'))).toBe(1000);
    for (const bad of ['0', '1001', '2.5', 'ten']) {
      expect(() => parseMaxItems(new URLSearchParams(`maxItems=${bad}`))).toThrowError(
        expect.objectContaining({ status: 400 }),
      );
    }
  });
});
