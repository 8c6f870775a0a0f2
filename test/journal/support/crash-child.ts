/**
 * Run in a child process by the crash test: records a file up to the given state, then dies by
 * SIGKILL with the journal still open (no close, no checkpoint), like a power cut of the agent.
 */
import { ManualClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { Journal } from '../../../src/journal/journal.js';
import { claimInput, UPLOAD_URL } from './journal-harness.js';

const [file, stopAfter] = process.argv.slice(2);
const clock = new ManualClock();
const journal = Journal.open(file!, { clock, log: silentLogger() });
const { item } = journal.recordClaim(claimInput());
journal.transition(item.id, 'validated');
journal.transition(item.id, 'creating');
if (stopAfter === 'created') {
  journal.transition(item.id, 'created', {
    jobId: 'job-crash',
    uploadUrl: UPLOAD_URL,
    uploadDeadline: clock.now() + 7_200_000,
  });
}
process.kill(process.pid, 'SIGKILL');
