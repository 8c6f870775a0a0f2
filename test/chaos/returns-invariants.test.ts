import { describe, expect, it } from 'vitest';
import type { ExpectedDocumentSet } from '../../bench/chaos/invariants.js';
import { checkReturns, type ReturnsObservation } from '../../bench/chaos/returns-invariants.js';
import { deterministicJobName } from '../../src/journal/job-name.js';

const SHA = 'a'.repeat(64);
const set: ExpectedDocumentSet = {
  itemName: 'doc-00001.pdf',
  itemSha256: SHA,
  itemMd5: 'item-md5',
  documents: [{ rowIndex: undefined, uploadMd5: 'item-md5' }],
};
const jobName = deterministicJobName({ folder: 'chaos', fileName: set.itemName, sha256: SHA });
const proofPath = '2026-11-27/doc-00001/se_1-DELIVERY_PROOF.pdf';
const reportPath = '2026-11-27/doc-00001/se_1-SUBMISSION_REPORT.pdf';

function statusText(overrides: { final?: boolean; businessStatus?: string; proof?: string } = {}): string {
  return JSON.stringify({
    file: set.itemName,
    final: overrides.final ?? true,
    jobs: [
      {
        jobId: 'job_1',
        followed: 'done',
        sendingEvents: [
          {
            sendingEventId: 'se_1',
            businessStatus: overrides.businessStatus ?? 'SUCCESS',
            final: true,
            documents: [
              { type: 'ORIGINAL', proof: undefined },
              { type: 'DELIVERY_PROOF', proof: overrides.proof ?? proofPath },
              { type: 'SUBMISSION_REPORT', proof: reportPath },
            ],
          },
        ],
      },
    ],
  });
}

/** One PDF sent as one job whose one sending event succeeded: both proofs and a final status file. */
function clean(): ReturnsObservation {
  return {
    jobs: [
      { id: 'job_1', name: jobName, uploadedMd5: 'item-md5' },
      // An orphan of a lost create answer: no upload, no events, in no status file.
      { id: 'job_0', name: jobName, uploadedMd5: null },
    ],
    events: [
      {
        id: 'se_1',
        jobId: 'job_1',
        businessStatus: 'SUCCESS',
        status: 'SUCCESS',
        final: true,
        documents: [
          { type: 'ORIGINAL', fileReference: 'blob_o', size: 10, md5: null },
          { type: 'DELIVERY_PROOF', fileReference: 'blob_p', size: 5, md5: 'p-md5' },
          { type: 'SUBMISSION_REPORT', fileReference: 'blob_r', size: 6, md5: 'r-md5' },
        ],
      },
    ],
    proofs: [
      { path: proofPath, md5: 'p-md5' },
      { path: reportPath, md5: 'r-md5' },
    ],
    statuses: [{ path: `2026-11-27/${set.itemName}.status.json`, text: statusText() }],
    proofsWritten: new Map([
      ['se_1 DELIVERY_PROOF', 1],
      ['se_1 SUBMISSION_REPORT', 1],
    ]),
    webhookAnswers: new Map([
      [
        'msg_1',
        [
          { slot: 0, status: 202 },
          { slot: 1, status: 200 },
        ],
      ],
    ]),
  };
}

describe('checkReturns', () => {
  it('passes a settled run where each proof is one file with the service bytes, written once, and the status file is final', () => {
    const report = checkReturns(clean(), { sets: [set], settled: true });
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ proofs: 2, statusFiles: 1, missing: [], duplicates: [] });
  });

  it('flags a proof in two files (a second name taken for one document) even before the run settles', () => {
    const seen = clean();
    seen.proofs = [
      ...seen.proofs,
      { path: '2026-11-27/doc-00001/se_1-DELIVERY_PROOF-blob_p.pdf', md5: 'p-md5' },
    ];
    const report = checkReturns(seen, { sets: [set], settled: false });
    expect(report.duplicates).toEqual(['se_1 DELIVERY_PROOF']);
    expect(report.violations[0]).toMatch(/DELIVERY_PROOF of se_1 is in 2 proof files/);
  });

  it('flags a proof written twice by the agents, though one file is left', () => {
    const seen = clean();
    seen.proofsWritten = new Map([['se_1 DELIVERY_PROOF', 2]]);
    const report = checkReturns(seen, { sets: [set], settled: false });
    expect(report.violations).toEqual([
      'proof se_1 DELIVERY_PROOF was written 2 times (agents\' "proof written" lines)',
    ]);
  });

  it('flags a webhook accepted by both agents as handled twice, and none answered as a repeat', () => {
    const seen = clean();
    seen.webhookAnswers = new Map([
      [
        'msg_1',
        [
          { slot: 0, status: 202 },
          { slot: 1, status: 202 },
        ],
      ],
      [
        'msg_2',
        [
          { slot: 0, status: 0 },
          { slot: 1, status: 503 },
          { slot: 0, status: 200 },
          { slot: 1, status: 202 },
        ],
      ],
    ]);
    const report = checkReturns(seen, { sets: [set], settled: false });
    expect(report.duplicates).toEqual(['msg_1']);
  });

  it('counts a missing proof, a proof with other bytes and a status file not final only once the run settled', () => {
    const seen = clean();
    seen.proofs = [{ path: reportPath, md5: 'other' }];
    seen.statuses = [{ path: `2026-11-27/${set.itemName}.status.json`, text: statusText({ final: false }) }];
    expect(checkReturns(seen, { sets: [set], settled: false }).violations).toEqual([
      `${set.itemName}: SUBMISSION_REPORT of se_1: ${reportPath} differs from the service's document (MD5)`,
    ]);
    const settled = checkReturns(seen, { sets: [set], settled: true });
    expect(settled.missing).toEqual(['se_1 DELIVERY_PROOF']);
    expect(settled.violations).toContain(`${set.itemName}: DELIVERY_PROOF of se_1 has no proof file`);
    expect(settled.violations).toContain(
      `${set.itemName}: status file 2026-11-27/${set.itemName}.status.json is not final`,
    );
  });

  it('flags a status file showing an older status than the service, or no proof for a written one', () => {
    const seen = clean();
    seen.statuses = [
      {
        path: `2026-11-27/${set.itemName}.status.json`,
        text: statusText({ businessStatus: 'IN_PROGRESS', proof: 'elsewhere.pdf' }),
      },
    ];
    const report = checkReturns(seen, { sets: [set], settled: true });
    expect(report.violations).toEqual([
      `${set.itemName}: sending event se_1 is IN_PROGRESS in its status file, SUCCESS at the service`,
      `${set.itemName}: DELIVERY_PROOF of se_1 shows proof elsewhere.pdf, written as ${proofPath}`,
    ]);
  });

  it('flags a second status file of one item, a status file or proof of nothing dropped, and an event twice in the daily CSVs', () => {
    const seen = clean();
    const header = 'finalAt,folder,file,row,label,jobId,jobName,sendingEventId,recipient\n';
    seen.statuses = [
      ...seen.statuses,
      { path: `2026-11-27/${set.itemName}.7.status.json`, text: statusText() },
      { path: '2026-11-27/stray.pdf.status.json', text: '{}' },
      { path: 'statuses-2026-11-26.csv', text: `${header}x,chaos,a,,,job_1,n,se_1,r\n` },
      { path: 'statuses-2026-11-27.csv', text: `${header}x,chaos,a,,,job_1,n,se_1,r\n` },
    ];
    seen.proofs = [...seen.proofs, { path: '2026-11-27/x/se_9-DELIVERY_PROOF.pdf', md5: 'z' }];
    const report = checkReturns(seen, { sets: [set], settled: false });
    expect(report.duplicates).toEqual([set.itemName]);
    expect(report.violations).toEqual([
      `${set.itemName} has 2 status files (2026-11-27/${set.itemName}.status.json, 2026-11-27/${set.itemName}.7.status.json)`,
      'proof file 2026-11-27/x/se_9-DELIVERY_PROOF.pdf is no wanted document of a final sending event',
      'status file 2026-11-27/stray.pdf.status.json is of no dropped item',
      'sending event se_1 is in 2 rows of the daily CSVs',
    ]);
  });

  it('takes each of two items of one name (an index.csv dropped twice) with its own status file, told apart by its jobs', () => {
    const seen = clean();
    const sha2 = 'b'.repeat(64);
    const second: ExpectedDocumentSet = {
      ...set,
      itemSha256: sha2,
      itemMd5: 'item2-md5',
      documents: [{ rowIndex: undefined, uploadMd5: 'item2-md5' }],
    };
    const name2 = deterministicJobName({ folder: 'chaos', fileName: set.itemName, sha256: sha2 });
    seen.jobs = [...seen.jobs, { id: 'job_2', name: name2, uploadedMd5: 'item2-md5' }];
    seen.events = [
      ...seen.events,
      {
        id: 'se_2',
        jobId: 'job_2',
        businessStatus: 'SUCCESS',
        status: 'SUCCESS',
        final: true,
        documents: [{ type: 'ORIGINAL', fileReference: 'blob_o2', size: 10, md5: null }],
      },
    ];
    const secondText = JSON.stringify({
      file: set.itemName,
      final: true,
      jobs: [
        {
          jobId: 'job_2',
          followed: 'done',
          sendingEvents: [{ sendingEventId: 'se_2', businessStatus: 'SUCCESS', final: true, documents: [] }],
        },
      ],
    });
    // The second item's file comes first: each file is matched to its item by the jobs it lists.
    seen.statuses = [
      { path: `2026-11-27/${set.itemName}.12.status.json`, text: secondText },
      ...seen.statuses,
    ];
    expect(checkReturns(seen, { sets: [set, second], settled: true }).violations).toEqual([]);

    seen.statuses = [
      ...seen.statuses,
      { path: `2026-11-27/${set.itemName}.13.status.json`, text: secondText },
    ];
    const report = checkReturns(seen, { sets: [set, second], settled: true });
    expect(report.duplicates).toEqual([set.itemName]);
    expect(report.violations[0]).toMatch(/has 3 status files for 2 items/);
  });
});
