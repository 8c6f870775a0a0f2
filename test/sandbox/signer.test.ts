import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createUrlSigner } from '../../src/sandbox/signer.js';

describe('pre-signed URLs', () => {
  it('accepts its own signature until expiry and refuses a changed path or a later time', () => {
    const clock = new ManualClock(1_000_000);
    const signer = createUrlSigner(Buffer.alloc(32, 7), () => 'https://127.0.0.1:1', clock);
    const url = new URL(signer.sign('/upload/job_1', 1_060_000));
    expect(signer.verify(url.pathname + url.search).path).toBe('/upload/job_1');
    expect(() => signer.verify(`/upload/job_2${url.search}`)).toThrow(/signature/);
    clock.advance(60_001);
    expect(() => signer.verify(url.pathname + url.search)).toThrow(/expired/);
  });
});
