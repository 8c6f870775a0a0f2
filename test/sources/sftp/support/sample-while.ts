/**
 * Calls `sample` on every event-loop turn while `action` runs, and once more after it settles,
 * so a test sees every intermediate state the loop can observe and always the final one.
 */
export async function sampleWhile<T>(sample: () => void, action: () => Promise<T>): Promise<T> {
  let done = false;
  const watch = (async () => {
    while (!done) {
      sample();
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  try {
    return await action();
  } finally {
    done = true;
    await watch;
    sample();
  }
}
