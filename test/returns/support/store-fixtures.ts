import { statusFilePath } from '../../../src/returns/proof-names.js';
import type { ReturnsStore } from '../../../src/returns/store.js';

/** Records one followed job, `job_1` of `pdf/a.pdf` (item 1, dropped 2026-11-21), first polled at 10. */
export async function addOneJob(store: ReturnsStore): Promise<void> {
  await store.addJobs(
    [
      {
        jobId: 'job_1',
        source: {
          itemId: 1,
          folder: 'pdf',
          fileName: 'a.pdf',
          sha256: 'ab',
          claimedAt: 0,
          day: '2026-11-21',
        },
        statusPath: (collision) => statusFilePath('2026-11-21', 'a.pdf', 1, collision),
        itemId: 1,
        rowIndex: undefined,
        label: undefined,
        jobName: undefined,
        recordedAt: 0,
        firstPollAt: 10,
      },
    ],
    'cursor',
    '1',
    0,
  );
}
