import { describe, expect, it } from 'vitest';
import {
  checkDocuments,
  checkInvariants,
  type ExpectedDocumentSet,
  type InputFile,
  isPartialName,
  mergeReports,
  type Observation,
} from '../../bench/chaos/invariants.js';
import { deterministicJobName } from '../../src/journal/job-name.js';

const inputs: InputFile[] = [
  { name: 'a.pdf', md5: 'aaa' },
  { name: 'b.pdf', md5: 'bbb' },
  { name: 'c.pdf', md5: 'ccc' },
];

/** A run where everything held: three files archived, one uploaded job each, an orphan job without upload. */
function clean(): Observation {
  return {
    jobs: [
      { id: 'j1', name: 'a', uploadedMd5: 'aaa' },
      { id: 'j2', name: 'b', uploadedMd5: 'bbb' },
      { id: 'j3', name: 'c', uploadedMd5: 'ccc' },
      { id: 'j0', name: 'c', uploadedMd5: null },
    ],
    archive: [
      { path: '2026-11-22/a.pdf', md5: 'aaa' },
      { path: '2026-11-22/a.pdf.result.json' },
      { path: '2026-11-22/b.pdf', md5: 'bbb' },
      { path: '2026-11-22/b.pdf.result.json' },
      { path: '2026-11-23/c.pdf', md5: 'ccc' },
      { path: '2026-11-23/c.pdf.result.json' },
    ],
    error: [],
    leftInInbox: [],
  };
}

describe('checkInvariants', () => {
  it('passes a run where every file is archived once with one matching upload (orphan jobs without upload allowed)', () => {
    const report = checkInvariants(inputs, clean(), { expectArchived: true });
    expect(report.violations).toEqual([]);
    expect(report).toMatchObject({ ok: true, files: 3, archived: 3, refused: 0, lost: [], duplicates: [] });
  });

  it('flags a file submitted twice (two uploaded jobs with its MD5) as a duplicate', () => {
    const seen = clean();
    seen.jobs = [...seen.jobs, { id: 'j4', name: 'b-again', uploadedMd5: 'bbb' }];
    const report = checkInvariants(inputs, seen);
    expect(report.ok).toBe(false);
    expect(report.duplicates).toEqual(['b.pdf']);
    expect(report.violations).toContain('b.pdf was uploaded 2 times');
  });

  it('flags a file in neither archive nor error as lost, and says when it is still in the drop folder', () => {
    const seen = clean();
    seen.archive = seen.archive.filter((e) => !e.path.includes('c.pdf'));
    seen.jobs = seen.jobs.filter((j) => j.uploadedMd5 !== 'ccc');
    seen.leftInInbox = ['.processing/c.pdf'];
    const report = checkInvariants(inputs, seen);
    expect(report.ok).toBe(false);
    expect(report.lost).toEqual(['c.pdf']);
    expect(report.violations).toEqual(['c.pdf is still in the drop folder']);
  });

  it('flags an archived file whose upload no job holds as lost', () => {
    const seen = clean();
    seen.jobs = seen.jobs.filter((j) => j.uploadedMd5 !== 'aaa');
    const report = checkInvariants(inputs, seen);
    expect(report.lost).toEqual(['a.pdf']);
    expect(report.violations).toEqual(['a.pdf is archived but no job holds its upload']);
  });

  it('flags an upload whose MD5 matches no input (a corrupted upload) as a mismatch, and the file as lost', () => {
    const seen = clean();
    seen.jobs = seen.jobs.map((j) => (j.id === 'j2' ? { ...j, uploadedMd5: 'b-truncated' } : j));
    const report = checkInvariants(inputs, seen);
    expect(report.ok).toBe(false);
    expect(report.mismatches).toEqual(['job j2']);
    expect(report.lost).toEqual(['b.pdf']);
  });

  it('flags an archived file whose content differs from every input as a mismatch', () => {
    const seen = clean();
    seen.archive = seen.archive.map((e) => (e.path === '2026-11-22/a.pdf' ? { ...e, md5: 'zzz' } : e));
    const report = checkInvariants(inputs, seen);
    expect(report.mismatches).toEqual(['2026-11-22/a.pdf']);
    expect(report.lost).toEqual(['a.pdf']);
  });

  it('flags a partial .tmp file left in the archive, the error folder or an output folder', () => {
    const seen = clean();
    seen.archive = [...seen.archive, { path: '2026-11-22/.a.pdf.result.json.8728a943.tmp' }];
    seen.error = [{ path: 'x.pdf.part' }];
    seen.outputs = [{ path: 'proofs/p.pdf.tmp' }];
    const report = checkInvariants(inputs, seen);
    expect(report.ok).toBe(false);
    expect(report.partial).toEqual([
      'archive/2026-11-22/.a.pdf.result.json.8728a943.tmp',
      'error/x.pdf.part',
      'output/proofs/p.pdf.tmp',
    ]);
  });

  it('lists, without flagging, an output temp file of an agent SIGKILLed for good (several agents); flags any other writer’s and a killed writer’s in the archive', () => {
    const killed = 'dddddddd';
    const seen = clean();
    seen.outputs = [
      { path: `statuses/2026-11-28/.docex-0bff4188f10a-${killed}.tmp` },
      { path: 'statuses/2026-11-28/.docex-0bff4188f10a-eeeeeeee.tmp' },
    ];
    seen.archive = [...seen.archive, { path: `2026-11-22/.docex-0bff4188f10a-${killed}.tmp` }];
    const report = checkInvariants(inputs, seen, { killedWriters: [killed] });
    expect(report.partial).toHaveLength(3);
    expect(report.violations).toEqual([
      `partial file left in archive: 2026-11-22/.docex-0bff4188f10a-${killed}.tmp`,
      'partial file left in output: statuses/2026-11-28/.docex-0bff4188f10a-eeeeeeee.tmp',
    ]);
  });

  it('flags a file placed twice (a second free name in the archive) as a duplicate', () => {
    const seen = clean();
    seen.archive = [
      ...seen.archive,
      { path: '2026-11-23/a.2.pdf', md5: 'aaa' },
      { path: '2026-11-23/a.2.pdf.result.json' },
    ];
    const report = checkInvariants(inputs, seen);
    expect(report.duplicates).toEqual(['a.pdf']);
    expect(report.violations).toEqual(['a.pdf is placed 2 times (archive 2, error 0)']);
  });

  it('flags a file both archived and refused', () => {
    const seen = clean();
    seen.error = [{ path: 'a.pdf', md5: 'aaa' }, { path: 'a.pdf.error.json' }, { path: 'a.pdf.error.txt' }];
    const report = checkInvariants(inputs, seen);
    expect(report.duplicates).toEqual(['a.pdf']);
  });

  it('flags an archived file without its .result.json and a refused one without its error records', () => {
    const seen = clean();
    seen.archive = seen.archive.filter((e) => e.path !== '2026-11-22/b.pdf.result.json');
    seen.archive = seen.archive.filter((e) => !e.path.includes('c.pdf'));
    seen.jobs = seen.jobs.filter((j) => j.uploadedMd5 !== 'ccc');
    seen.error = [{ path: 'c.pdf', md5: 'ccc' }, { path: 'c.pdf.error.txt' }];
    const report = checkInvariants(inputs, seen);
    expect(report.violations).toEqual([
      'archived 2026-11-22/b.pdf has no .result.json',
      'refused c.pdf has no .error.json',
    ]);
  });

  it('accepts a refusal unless archiving is expected, and never a refused file that was uploaded', () => {
    const seen = clean();
    seen.archive = seen.archive.filter((e) => !e.path.includes('c.pdf'));
    seen.error = [
      { path: 'c.pdf', md5: 'ccc' },
      { path: 'c.pdf.error.json', code: 'DOCEX_INPUT_POISON' },
      { path: 'c.pdf.error.txt' },
    ];
    expect(checkInvariants(inputs, seen).violations).toEqual(['c.pdf is refused but was uploaded']);
    seen.jobs = seen.jobs.filter((j) => j.uploadedMd5 !== 'ccc');
    expect(checkInvariants(inputs, seen).ok).toBe(true);
    expect(checkInvariants(inputs, seen, { expectArchived: true }).violations).toEqual([
      'c.pdf was refused (DOCEX_INPUT_POISON)',
    ]);
  });
});

describe('checkInvariants, placement only (the remote archive of an SFTP folder)', () => {
  it('needs no side files or jobs there, but still catches a second copy and a partial file', () => {
    const remote: Observation = {
      jobs: [],
      archive: [
        { path: '2026-11-22/a.pdf', md5: 'aaa' },
        { path: '2026-11-22/b.pdf', md5: 'bbb' },
        { path: '2026-11-22/c.pdf', md5: 'ccc' },
      ],
      error: [],
      leftInInbox: [],
    };
    expect(checkInvariants(inputs, remote, { placementOnly: true }).violations).toEqual([]);
    remote.archive = [...remote.archive, { path: '2026-11-23/c.pdf', md5: 'ccc' }, { path: '.c.pdf.tmp' }];
    const report = checkInvariants(inputs, remote, { placementOnly: true });
    expect(report.duplicates).toEqual(['c.pdf']);
    expect(report.partial).toEqual(['archive/.c.pdf.tmp']);
    const merged = mergeReports(checkInvariants(inputs, clean()), report, 'remote: ');
    expect(merged.ok).toBe(false);
    expect(merged.violations).toEqual([
      'remote: partial file left in archive: .c.pdf.tmp',
      'remote: c.pdf is placed 2 times (archive 2, error 0)',
    ]);
  });
});

describe("checkDocuments, routed sets (each document in its route's workflow and company)", () => {
  const sha = (c: string) => c.repeat(64);
  const routed: ExpectedDocumentSet[] = [
    {
      itemName: 'acme-00000.pdf',
      itemSha256: sha('a'),
      itemMd5: 'aaa',
      documents: [{ rowIndex: undefined, uploadMd5: 'aaa' }],
      route: { workflowId: 'wf_managed', companyId: 'cmp_managed' },
    },
    {
      itemName: 'partner-00001.pdf',
      itemSha256: sha('b'),
      itemMd5: 'bbb',
      documents: [{ rowIndex: undefined, uploadMd5: 'bbb' }],
      route: { workflowId: 'wf_own', companyId: 'cmp_partner' },
    },
  ];
  const job = (id: string, set: ExpectedDocumentSet, uploadedMd5: string | null, at: [string, string]) => ({
    id,
    name: deterministicJobName({ folder: 'chaos', fileName: set.itemName, sha256: set.itemSha256 }),
    uploadedMd5,
    workflowId: at[0],
    companyId: at[1],
  });
  const [acme, partner] = [routed[0]!, routed[1]!];

  it("passes when every job of a document, an orphan too, is in its route's workflow and company", () => {
    const jobs = [
      job('j1', acme, 'aaa', ['wf_managed', 'cmp_managed']),
      job('j0', acme, null, ['wf_managed', 'cmp_managed']),
      job('j2', partner, 'bbb', ['wf_own', 'cmp_partner']),
    ];
    const result = checkDocuments(routed, jobs, new Set());
    expect(result.violations).toEqual([]);
    expect(result.misrouted).toEqual([]);
  });

  it("flags a document sent as the folder's default company instead of its route's, and a misrouted orphan", () => {
    const jobs = [
      job('j1', acme, 'aaa', ['wf_own', 'cmp_partner']),
      job('j2', partner, 'bbb', ['wf_own', 'cmp_partner']),
      job('j3', partner, null, ['wf_managed', 'cmp_managed']),
    ];
    const result = checkDocuments(routed, jobs, new Set());
    expect(result.misrouted).toEqual(['acme-00000.pdf', 'partner-00001.pdf']);
    expect(result.lost).toEqual([]);
    expect(result.violations).toEqual([
      'acme-00000.pdf: job j1 is in workflow wf_own of company cmp_partner; its route says workflow wf_managed of company cmp_managed',
      'partner-00001.pdf: job j3 is in workflow wf_managed of company cmp_managed; its route says workflow wf_own of company cmp_partner',
    ]);
  });

  it('reports the misrouted documents in checkInvariants only for routed sets', () => {
    const seen: Observation = {
      jobs: [
        job('j1', acme, 'aaa', ['wf_other', 'cmp_managed']),
        job('j2', partner, 'bbb', ['wf_own', 'cmp_partner']),
      ],
      archive: [
        { path: 'acme-00000.pdf', md5: 'aaa' },
        { path: 'acme-00000.pdf.result.json' },
        { path: 'partner-00001.pdf', md5: 'bbb' },
        { path: 'partner-00001.pdf.result.json' },
      ],
      error: [],
      leftInInbox: [],
    };
    const files = [
      { name: 'acme-00000.pdf', md5: 'aaa' },
      { name: 'partner-00001.pdf', md5: 'bbb' },
    ];
    const report = checkInvariants(files, seen, { sets: routed });
    expect(report.ok).toBe(false);
    expect(report.misrouted).toEqual(['acme-00000.pdf']);
    const unrouted = routed.map(({ route: _route, ...set }) => set);
    const plain = checkInvariants(files, seen, { sets: unrouted });
    expect(plain.ok).toBe(true);
    expect(plain.misrouted).toBeUndefined();
  });
});

describe('isPartialName', () => {
  it('knows the temporary names writers use before their final rename', () => {
    for (const name of ['.x.pdf.abc.tmp', 'x.pdf.part', 'dir/x.partial', '~$x.docx', 'x.PDF.TMP']) {
      expect(isPartialName(name), name).toBe(true);
    }
    for (const name of ['x.pdf', 'x.pdf.result.json', '2026-11-22/x.tmp.pdf']) {
      expect(isPartialName(name), name).toBe(false);
    }
  });
});
