/**
 * The sandbox as its own process for the chaos runs: `tsx sandbox-child.ts '<json options>'`.
 * Prints one JSON line (URLs, file paths; no secrets) once it listens; SIGTERM stops it.
 * - `filesPublicUrl`: the pre-signed upload URLs name this origin (a TCP fault proxy in front of the
 *   files host) instead of the files host itself; the control API stays reachable directly.
 * - Its clock is frozen (a ManualClock) and moves only through /_sandbox/clock/advance, so windows
 *   and tokens expire exactly when a scenario says.
 * - Injected faults are counted here (the injector has no counters) and answered over IPC.
 */
import type { ServerResponse } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { FaultInjector } from '../../src/sandbox/faults.js';
import type { SandboxRequest } from '../../src/sandbox/http.js';
import { startSandbox } from '../../src/sandbox/index.js';

interface ChildOptions {
  stateDir: string;
  filesPublicUrl?: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as ChildOptions;
if (!options.stateDir) throw new Error('usage: sandbox-child.ts \'{"stateDir":...}\'');

/** Faults answered, by HTTP status ("reset" for uploads cut off part-way). */
const injected: Record<string, number> = {};
const count = (key: string) => {
  injected[key] = (injected[key] ?? 0) + 1;
};
const apply = FaultInjector.prototype.apply;
FaultInjector.prototype.apply = async function (req: SandboxRequest, res: ServerResponse) {
  const answered = await apply.call(this, req, res);
  if (answered) count(String(res.statusCode));
  return answered;
};
const shouldReset = FaultInjector.prototype.shouldResetUpload;
FaultInjector.prototype.shouldResetUpload = function (req: SandboxRequest) {
  const cut = shouldReset.call(this, req);
  if (cut) count('reset');
  return cut;
};

const sandbox = await startSandbox({
  stateDir: options.stateDir,
  clock: new ManualClock(Date.now()),
  log: silentLogger(),
});
const direct = { ...sandbox.urls };
if (options.filesPublicUrl) sandbox.urls.files = options.filesPublicUrl;
process.stdout.write(
  `${JSON.stringify({ urls: direct, publicFilesUrl: sandbox.urls.files, paths: sandbox.paths })}\n`,
);
process.on('message', (message: { type?: string }) => {
  if (message?.type === 'injected') process.send?.({ type: 'injected', injected });
});
process.once('SIGTERM', () => {
  void sandbox.stop().finally(() => process.exit(0));
});
