import { describe, expect, it } from 'vitest';
import { isLoopback } from '../../src/sandbox/server.js';

describe('isLoopback', () => {
  it('treats only 127.0.0.0/8 and ::1 as loopback', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
  });
});
