/**
 * The sandbox as its own process for the benchmarks: `tsx sandbox-child.ts <stateDir>`. Prints one
 * JSON line (URLs, file paths, client id; no secrets) once it listens; SIGTERM stops it.
 * Its clock is frozen: the sending-event lifecycle (proof PDFs) does not run, so every column of a
 * benchmark measures the ingest path (token, create, PUT, upload processing) and nothing else.
 */
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { startSandbox } from '../../src/sandbox/index.js';

const stateDir = process.argv[2];
if (!stateDir) throw new Error('usage: sandbox-child.ts <stateDir>');
const sandbox = await startSandbox({
  stateDir,
  clock: new ManualClock(Date.now()),
  log: silentLogger(),
  maxUploadBytes: 8 * 1024 ** 3,
});
process.stdout.write(
  `${JSON.stringify({ urls: sandbox.urls, paths: sandbox.paths, clientId: sandbox.credentials.clientId })}\n`,
);
process.once('SIGTERM', () => {
  void sandbox.stop().finally(() => process.exit(0));
});
