/**
 * What the client reports for metrics: each answered (or failed) request, each token fetch, each
 * upload attempt. Optional and passive: an observer that throws never breaks a call.
 */
export interface ApiObserver {
  /** One HTTP exchange: the route template (never a URL), the status or `error` when none came. */
  request?(event: { method: string; route: string; status: number | 'error'; seconds: number }): void;
  /** One token fetch from the token host. */
  tokenRefresh?(event: { ok: boolean }): void;
  /** One upload attempt to a pre-signed URL: bytes read from the file and how long it took. */
  upload?(event: { bytes: number; seconds: number; status: number | 'error' }): void;
  /** A call of `caller` (intake, returns) waited this long for its turn in the host's pace. */
  paceWait?(event: { caller: string; seconds: number }): void;
  /** The service answered a call of `caller` 429 or 503: the host's pace backs off. */
  paceBackoff?(event: { caller: string; status: number }): void;
}

/** Calls one observer hook, swallowing what it throws: metrics must not fail a request. */
export function notify<K extends keyof ApiObserver>(
  observer: ApiObserver | undefined,
  hook: K,
  event: Parameters<NonNullable<ApiObserver[K]>>[0],
): void {
  const fn = observer?.[hook] as ((e: typeof event) => void) | undefined;
  if (!fn) return;
  try {
    fn.call(observer, event);
  } catch {
    // A broken observer is the metrics' problem, not the upload's.
  }
}

/** One observer that tells each of `observers` (each isolated: one that throws does not stop the next). */
export function combineObservers(...observers: (ApiObserver | undefined)[]): ApiObserver {
  const present = observers.filter((o): o is ApiObserver => o !== undefined);
  const each =
    <K extends keyof ApiObserver>(hook: K) =>
    (event: Parameters<NonNullable<ApiObserver[K]>>[0]) => {
      for (const o of present) notify(o, hook, event);
    };
  return {
    request: each('request'),
    tokenRefresh: each('tokenRefresh'),
    upload: each('upload'),
    paceWait: each('paceWait'),
    paceBackoff: each('paceBackoff'),
  };
}
