/**
 * Run in a child process by the crash test: records a file up to the given state, then dies by
 * SIGKILL with the journal still open (no close, no checkpoint), like a power cut of the agent.
 */
import { ManualClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { openJournal } from '../../../src/journal/open.js';
import { claimInput, UPLOAD_URL } from './journal-harness.js';

const [file, stopAfter] = process.argv.slice(2);
const clock = new ManualClock();
const journal = await openJournal({ kind: 'sqlite', file: file! }, { clock, log: silentLogger() });
const { item } = await journal.recordClaim(claimInput());
await journal.transition(item.id, 'validated');
await journal.transition(item.id, 'creating');
if (stopAfter === 'created') {
  await journal.transition(item.id, 'created', {
    jobId: 'job-crash',
    uploadUrl: UPLOAD_URL,
    uploadDeadline: clock.now() + 7_200_000,
  });
}
process.kill(process.pid, 'SIGKILL');
