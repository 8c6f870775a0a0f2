/**
 * The inspector's worker thread: loads every parser once, says it is ready, then runs one task
 * per message. A task's own failure is answered as an error with its code; running out of memory
 * or time ends the thread, which the pool reports as the limit hit.
 */
import { format } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';
import { setParseLimits } from '../inspect/limits.js';
import { TASKS, type TaskName } from './tasks.js';

const port = parentPort;
if (!port) throw new Error('the inspector worker runs in a worker thread');

setParseLimits((workerData as { limits?: Parameters<typeof setParseLimits>[0] } | null)?.limits ?? {});

// Parsers talk on the console (pdf-lib: "Parsed number that is too large..."): their words go
// to the agent's log as JSON lines, never as plain text on its stdout.
for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  console[level] = (...args: unknown[]) => port.postMessage({ log: format(...args) });
}

// Loaded now, not at the first PDF: the time limit counts the parse, not the module load.
await import('pdf-lib');

port.on('message', async (m: { task: TaskName; args: unknown[] }) => {
  try {
    const run = TASKS[m.task] as (...args: unknown[]) => Promise<unknown>;
    port.postMessage({ value: await run(...m.args) });
  } catch (err) {
    const e = err as Error & { code?: unknown; details?: unknown };
    port.postMessage({
      error: {
        message: e.message ?? String(err),
        ...(typeof e.code === 'string' ? { code: e.code } : {}),
        ...(e.details && typeof e.details === 'object' ? { details: e.details } : {}),
      },
    });
  }
});
port.postMessage({ ready: true });
