import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxContext } from './context.js';
import { type FaultInjector, loseAnswer } from './faults.js';
import { type Caller, HttpProblem, problem, type Router, type SandboxRequest, sendProblem } from './http.js';
import type { InFlight } from './in-flight.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * The request pipeline shared by the three hosts: run the lifecycle's due steps, match the route,
 * refuse non-loopback control calls, apply injected faults, authenticate, run the handler, and
 * answer every failure as problem+json. Logs name the path only: query strings carry signatures.
 */
export interface HandlerOptions {
  ctx: SandboxContext;
  router: Router;
  lifecycle: Lifecycle;
  faults: FaultInjector;
  authenticate?: (req: SandboxRequest) => Caller;
  /** Paths under this prefix are the control API: loopback only, no faults. */
  controlPrefix?: string;
  /** Counts running handlers so stop() can wait for them. */
  inFlight?: InFlight;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

export function createRequestHandler(options: HandlerOptions) {
  const { ctx, router, lifecycle, faults } = options;
  const handle = async (raw: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = raw.method ?? 'GET';
    let path = (raw.url ?? '/').split('?')[0] ?? '/';
    try {
      const url = parseTarget(raw.url);
      path = url.pathname;
      // Due transitions happen now; proof rendering finishes in the background (see settle()).
      lifecycle.tick();
      const control = options.controlPrefix !== undefined && path.startsWith(options.controlPrefix);
      if (control && !isLoopback(raw.socket.remoteAddress)) {
        throw problem(403, 'the control API answers loopback callers only');
      }
      const matched = router.match(method, path);
      if (!matched) throw problem(404, `no route for ${method} ${path}`);
      const req: SandboxRequest = {
        method,
        path,
        params: matched.params,
        query: url.searchParams,
        raw,
        caller: undefined,
        route: matched.route.pattern,
      };
      if (!control && (await faults.apply(req, res))) return;
      if (!control && faults.shouldDropAnswer(req)) loseAnswer(res);
      if (options.authenticate) req.caller = options.authenticate(req);
      await matched.route.handler(req, res);
    } catch (err) {
      if (err instanceof HttpProblem) {
        if (err.status >= 500) ctx.log.warn({ method, path, status: err.status }, 'request failed');
        sendProblem(res, err);
        return;
      }
      ctx.log.error({ err, method, path }, 'unexpected error in a sandbox route');
      sendProblem(res, problem(500, 'unexpected error in the sandbox'));
    }
  };
  // A safety net: whatever escapes the handler must not become an unhandled rejection.
  return (raw: IncomingMessage, res: ServerResponse): void => {
    options.inFlight?.enter();
    handle(raw, res)
      .catch((err: unknown) => {
        ctx.log.error({ err, method: raw.method }, 'sandbox request handler failed');
        res.destroy();
      })
      .finally(() => options.inFlight?.leave());
  };
}

function parseTarget(target: string | undefined): URL {
  try {
    return new URL(target ?? '/', 'https://sandbox.invalid');
  } catch {
    throw problem(400, 'malformed request target');
  }
}
