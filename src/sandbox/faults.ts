import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { HttpProblem, problem, type SandboxRequest, STATUS_TITLES, sendProblem } from './http.js';

/**
 * Injected faults, per route pattern (`/jobs/single-file`, `/upload/:jobId`, or `*`), applied
 * before the route's handler. They let tests and demos show how the agent copes with a flaky
 * service: errors, latency, bursts of 429, connections reset in the middle of an upload, and
 * answers lost after the work was done.
 */
export const faultSchema = z.object({
  route: z.string().min(1),
  method: z.string().optional(),
  errorRate: z.number().min(0).max(1).optional(),
  status: z.number().int().min(400).max(599).optional(),
  latencyMs: z.number().int().min(0).max(120_000).optional(),
  burst429: z
    .object({ count: z.number().int().min(0), retryAfterSeconds: z.number().int().min(0) })
    .optional(),
  resetMidUploadRate: z.number().min(0).max(1).optional(),
  /** Deterministic: the next N matching requests fail with `status`. */
  failNext: z.number().int().min(0).optional(),
  /** Retry-After sent with the failNext and errorRate answers, as the service would: seconds or an HTTP date. */
  retryAfter: z.string().min(1).max(64).optional(),
  /**
   * The lost answer: the request is carried out, then the connection is cut before the answer (a
   * rate, or the next N matching requests). What tests exactly once: the service did the work.
   */
  dropAnswerRate: z.number().min(0).max(1).optional(),
  dropAnswerNext: z.number().int().min(0).optional(),
  /** Uploads only: the file is turned into sending events this long after the 200 answer. */
  processingDelayMs: z.number().int().min(0).max(3_600_000).optional(),
});
export type Fault = z.infer<typeof faultSchema>;

export class FaultInjector {
  private rules: Fault[] = [];
  /** Answers cut off after the work was done, since start. */
  answersDropped = 0;
  /** Aborted by stop(): latency sleeps end at once instead of holding the shutdown. */
  private readonly stopping = new AbortController();

  constructor(private readonly random: () => number = Math.random) {}

  add(fault: Fault): void {
    this.rules.push(structuredClone(fault));
  }

  clear(): void {
    this.rules = [];
  }

  list(): Fault[] {
    return structuredClone(this.rules);
  }

  private matching(req: SandboxRequest): Fault[] {
    return this.rules.filter(
      (r) =>
        (r.route === '*' || r.route === req.route || r.route === req.path) &&
        (r.method === undefined || r.method.toUpperCase() === req.method),
    );
  }

  /** Applies the faults of this request; true when a fault already answered it. */
  async apply(req: SandboxRequest, res: ServerResponse): Promise<boolean> {
    const rules = this.matching(req);
    try {
      for (const rule of rules) {
        if (rule.latencyMs) await sleep(rule.latencyMs, undefined, { signal: this.stopping.signal });
      }
    } catch {
      this.fail(res, 503, 'the sandbox is stopping');
      return true;
    }
    for (const rule of rules) {
      if (rule.failNext !== undefined && rule.failNext > 0) {
        rule.failNext--;
        this.fail(res, rule.status ?? 503, 'injected fault', rule.retryAfter);
        return true;
      }
      if (rule.burst429 && rule.burst429.count > 0) {
        rule.burst429.count--;
        sendProblem(
          res,
          new HttpProblem(429, STATUS_TITLES[429] ?? 'Too Many Requests', 'injected rate limit', undefined, {
            'retry-after': String(rule.burst429.retryAfterSeconds),
          }),
        );
        return true;
      }
      if (rule.errorRate && this.random() < rule.errorRate) {
        this.fail(res, rule.status ?? 503, 'injected fault', rule.retryAfter);
        return true;
      }
    }
    return false;
  }

  /** Whether this request's answer is lost (decided once per request, before its handler runs). */
  shouldDropAnswer(req: SandboxRequest): boolean {
    for (const rule of this.matching(req)) {
      if (rule.dropAnswerNext !== undefined && rule.dropAnswerNext > 0) {
        rule.dropAnswerNext--;
        this.answersDropped++;
        return true;
      }
      if (rule.dropAnswerRate !== undefined && this.random() < rule.dropAnswerRate) {
        this.answersDropped++;
        return true;
      }
    }
    return false;
  }

  /** Whether this upload should be cut off part-way (decided once per request). */
  shouldResetUpload(req: SandboxRequest): boolean {
    return this.matching(req).some(
      (r) => r.resetMidUploadRate !== undefined && this.random() < r.resetMidUploadRate,
    );
  }

  /** How long after the answer an upload's processing starts (the largest matching delay). */
  processingDelayMs(req: SandboxRequest): number {
    return Math.max(0, ...this.matching(req).map((r) => r.processingDelayMs ?? 0));
  }

  /** Ends every latency sleep in progress; the requests waiting in them answer 503. */
  stop(): void {
    this.stopping.abort();
  }

  private fail(res: ServerResponse, status: number, detail = 'injected fault', retryAfter?: string): void {
    const answer = problem(status, detail);
    sendProblem(
      res,
      retryAfter === undefined
        ? answer
        : new HttpProblem(answer.status, answer.title, detail, undefined, { 'retry-after': retryAfter }),
    );
  }
}

/**
 * The handler runs as usual, but whatever it answers never leaves: when it answers, the socket is
 * destroyed, so the client sees a reset with the work already done.
 */
export function loseAnswer(res: ServerResponse): void {
  const cut = () => {
    res.socket?.destroy();
    return res;
  };
  res.writeHead = cut as unknown as ServerResponse['writeHead'];
  res.setHeader = (() => res) as unknown as ServerResponse['setHeader'];
  res.write = (() => true) as unknown as ServerResponse['write'];
  res.end = cut as unknown as ServerResponse['end'];
}
