/**
 * Polls `check` until it returns a value other than `undefined` or `false`, and returns that value;
 * throws when `timeoutMs` passes first. For tests that wait on another process, a file or a
 * timer-driven part, where there is no event to await.
 */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  // Generous: a loaded 2-core machine running the whole suite stalls for seconds at times, and
  // only a wait that fails anyway is slowed by it.
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 15));
  }
}
