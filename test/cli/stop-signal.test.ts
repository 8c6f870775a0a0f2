/** The decision on each stop signal (src/cli/signals.ts), on a clock of the test's. */
import { describe, expect, it } from 'vitest';
import { REPEAT_WINDOW_MS, signalExitCode, stopSignalHandler } from '../../src/cli/signals.js';

function handler() {
  let now = 0;
  const repeats: string[] = [];
  const forced: NodeJS.Signals[] = [];
  const { stopped, handle } = stopSignalHandler({
    now: () => now,
    onRepeat: (signal, outcome) => repeats.push(`${signal} ${outcome}`),
    force: (signal) => forced.push(signal),
  });
  return { stopped, handle, repeats, forced, advance: (ms: number) => (now += ms) };
}

describe('stop signals', () => {
  it('stops on the first, ignores repeats within the window (the same Ctrl-C passed on by npm or a shell)', async () => {
    const h = handler();
    h.handle('SIGINT');
    h.advance(5);
    h.handle('SIGINT');
    h.advance(REPEAT_WINDOW_MS - 10);
    h.handle('SIGTERM');
    await expect(h.stopped).resolves.toBe('SIGINT');
    expect(h.repeats).toEqual(['SIGINT repeated', 'SIGTERM repeated']);
    expect(h.forced).toEqual([]);
  });

  it('forces the exit on a stop signal after the window: a second request', () => {
    const h = handler();
    h.handle('SIGTERM');
    h.advance(REPEAT_WINDOW_MS);
    h.handle('SIGINT');
    expect(h.repeats).toEqual(['SIGINT forced']);
    expect(h.forced).toEqual(['SIGINT']);
  });

  it('exits as a shell reports a death by that signal', () => {
    expect(signalExitCode('SIGINT')).toBe(130);
    expect(signalExitCode('SIGTERM')).toBe(143);
  });
});
