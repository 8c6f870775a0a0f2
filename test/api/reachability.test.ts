import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { combineObservers } from '../../src/api/observer.js';
import { ServiceReachability } from '../../src/api/reachability.js';
import { retryPolicy } from '../../src/api/retry.js';
import { withRetry } from '../../src/api/retry-loop.js';
import { ManualClock } from '../../src/core/clock.js';
import { captureLogger } from './support/log-capture.js';

function tracker() {
  const clock = new ManualClock(1_000_000);
  const { log, lines } = captureLogger('debug');
  const reach = new ServiceReachability({ clock, log, warnAfterFailures: 3, errorAfterMs: 60_000 });
  const call = (status: number | 'error') => reach.request({ method: 'GET', route: '/jobs/{id}', status });
  const said = () => lines().map((l) => [l['level'], l['msg']]);
  return { clock, reach, call, said };
}

describe('ServiceReachability', () => {
  it('says once that calls keep failing, once that the service is unreachable, and once that it answers again', () => {
    const { clock, reach, call, said } = tracker();
    call('error');
    call(503);
    expect(said()).toEqual([]);
    call(429);
    expect(said()).toEqual([['warn', 'service calls keep failing']]);
    for (let i = 0; i < 20; i++) {
      clock.advance(5_000);
      call('error');
    }
    expect(reach.unreachableForMs()).toBe(100_000);
    expect(said()).toEqual([
      ['warn', 'service calls keep failing'],
      ['error', 'service unreachable: files and jobs wait until it answers again'],
    ]);
    call(200);
    expect(reach.unreachableForMs()).toBe(0);
    expect(said()[2]).toEqual(['info', 'service answers again']);
    expect(said()).toHaveLength(3);
  });

  it('counts a 4xx answer as the service answering', () => {
    const { reach, call, said } = tracker();
    call('error');
    call('error');
    call(404);
    call('error');
    call('error');
    expect(said()).toEqual([]);
    expect(reach.unreachableForMs()).toBe(0);
  });

  it('says nothing on recovery from a blip that was never warned about', () => {
    const { call, said } = tracker();
    call('error');
    call(200);
    expect(said()).toEqual([]);
  });

  it('hears uploads too, through a combined observer that isolates a throwing one', () => {
    const { clock, reach } = tracker();
    const both = combineObservers(
      {
        upload: () => {
          throw new Error('broken metrics');
        },
      },
      reach,
    );
    both.upload?.({ bytes: 1, seconds: 0, status: 'error' });
    clock.advance(1_000);
    expect(reach.unreachableForMs()).toBe(1_000);
  });
});

describe('withRetry logging', () => {
  it('logs each retry at debug, not info', async () => {
    const { log, lines } = captureLogger('debug');
    let n = 0;
    const result = await withRetry(
      {
        policy: retryPolicy({ baseDelayMs: 1, maxDelayMs: 1, random: () => 0 }),
        clock: new ManualClock(),
        log,
        method: 'GET',
        route: '/jobs/{id}',
        retryable: true,
      },
      async () => {
        if (++n < 3)
          throw new ApiError('DOCEX_API_503', 'unavailable', {
            status: 503,
            method: 'GET',
            route: '/jobs/{id}',
          });
        return 'ok';
      },
    );
    expect(result).toBe('ok');
    expect(lines().map((l) => [l['level'], l['msg']])).toEqual([
      ['debug', 'api retry'],
      ['debug', 'api retry'],
    ]);
  });
});
