/**
 * Whether the service answers, told by every exchange the client makes (an ApiObserver). Retries
 * are logged at debug by the retry loop; this says it once per outage instead: one warning when
 * calls keep failing, one error once they have failed for `errorAfterMs`, one line when an answer
 * comes again. /readyz reads how long the service has been unreachable.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ApiObserver } from './observer.js';

export interface ReachabilityOptions {
  clock: Clock;
  log: Logger;
  /** Failed exchanges in a row before the warning. */
  warnAfterFailures?: number;
  /** Time failing before the error (and before /readyz says not ready). */
  errorAfterMs?: number;
}

export const DEFAULT_UNREACHABLE_ERROR_MS = 5 * 60_000;
const DEFAULT_WARN_AFTER_FAILURES = 3;

/** No answer, or an answer that says the service cannot serve now (429, 5xx). */
export function isOutageStatus(status: number | 'error'): boolean {
  return status === 'error' || status === 429 || status >= 500;
}

interface Failure {
  method?: string;
  route?: string;
  status: number | 'error';
}

export class ServiceReachability implements ApiObserver {
  private failingSince: number | undefined;
  private failures = 0;
  private warned = false;
  private errored = false;
  private readonly warnAfter: number;
  readonly errorAfterMs: number;

  constructor(private readonly options: ReachabilityOptions) {
    this.warnAfter = options.warnAfterFailures ?? DEFAULT_WARN_AFTER_FAILURES;
    this.errorAfterMs = options.errorAfterMs ?? DEFAULT_UNREACHABLE_ERROR_MS;
  }

  request(e: { method: string; route: string; status: number | 'error' }): void {
    this.exchange({ method: e.method, route: e.route, status: e.status });
  }

  upload(e: { status: number | 'error' }): void {
    this.exchange({ route: 'upload', status: e.status });
  }

  /** Milliseconds since the first failure of the current outage; 0 while the service answers. */
  unreachableForMs(now = this.options.clock.now()): number {
    return this.failingSince === undefined ? 0 : Math.max(0, now - this.failingSince);
  }

  private exchange(e: Failure): void {
    if (isOutageStatus(e.status)) this.failed(e);
    else this.answered();
  }

  private failed(e: Failure): void {
    const now = this.options.clock.now();
    this.failingSince ??= now;
    this.failures++;
    const forMs = now - this.failingSince;
    const context = { ...e, failures: this.failures, failingForMs: forMs };
    if (!this.warned && this.failures >= this.warnAfter) {
      this.warned = true;
      this.options.log.warn(context, 'service calls keep failing');
    }
    if (!this.errored && forMs >= this.errorAfterMs) {
      this.errored = true;
      this.options.log.error(
        { ...context, code: 'DOCEX_SERVICE_UNREACHABLE' },
        'service unreachable: files and jobs wait until it answers again',
      );
    }
  }

  private answered(): void {
    if (this.failingSince === undefined) return;
    if (this.warned) {
      this.options.log.info(
        { failures: this.failures, failedForMs: this.options.clock.now() - this.failingSince },
        'service answers again',
      );
    }
    this.failingSince = undefined;
    this.failures = 0;
    this.warned = false;
    this.errored = false;
  }
}
