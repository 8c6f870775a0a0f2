import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BacklogResult, phaseOf } from '../../bench/backlog.js';
import {
  BACKLOG_RETURN_NOTES,
  backlogReturnFigures,
  backlogRows,
  phasesText,
  returnPathFlatRows,
  returnPathFlatTargets,
  returnPathRows,
} from '../../bench/backlog-returns-report.js';
import { type BenchReport, markdown, rows } from '../../bench/report.js';
import type { ReturnPathFlatResult, ReturnPathResult } from '../../bench/return-path.js';
import { countFiles } from '../../bench/support/count-files.js';

const machine = {
  cpu: 'Test CPU',
  cores: 2,
  node: 'v20.19.0',
  platform: 'Linux 6',
  memoryGiB: 4,
  loadAverageAtStart: [1, 2, 3],
  date: '2026-11-22T00:00:00.000Z',
};

const backlog: BacklogResult = {
  scenario: 'backlog',
  files: 100_000,
  concurrency: 8,
  createSeconds: 20,
  agent: {
    firstCreatedMs: 4120,
    firstUploadedMs: 4177,
    windowSeconds: 60,
    uploadedInWindow: 3900,
    filesPerSecond: 65,
    drained: false,
    peakRssAtFirstUploadMiB: 140,
    peakRssMiB: 150.5,
  },
  baseline: { column: 'ls | xargs curl', files: 300, firstUploadedMs: 360, filesPerSecond: 21.4 },
  firstUploadVsBaseline: 0.08,
};

const returnPath: ReturnPathResult = {
  scenario: 'return-path',
  events: 10_000,
  concurrency: 8,
  setup: { intakeSeconds: 5, finalizeSeconds: 300, peppolSeedSeconds: 40 },
  proofs: {
    documents: 20_000,
    seconds: 250,
    documentsPerSecond: 80,
    peakRssMiB: 160,
    baseline: { column: 'bash + curl', documents: 2000, seconds: 200, documentsPerSecond: 10 },
    vsBaseline: 8,
  },
  peppol: { documents: 10_011, seconds: 200, documentsPerSecond: 50, peakRssMiB: 140 },
};

describe('backlog and return-path report', () => {
  it('shows the backlog time to first submission, its rate in the window and its peak RSS', () => {
    const [first, rate, scriptFirst, scriptRate] = backlogRows(backlog);
    expect(first?.[2]).toBe('4.1 s, 4.2 s');
    expect(rate?.[1]).toBe('agent: uploads, first 60 s');
    expect(rate?.[5]).toBe('peak RSS 150.5 MiB (140 MiB at the first upload)');
    expect(scriptFirst?.[2]).toBe('0.4 s');
    expect(scriptRate?.[2]).toBe('21.4 files/s');
  });

  it('says "all N in S s" when the backlog was drained, and shows no script rows without a baseline', () => {
    const drained = {
      ...backlog,
      agent: { ...backlog.agent, drained: true, uploadedInWindow: 100_000, windowSeconds: 1500 },
      baseline: undefined,
    };
    const table = backlogRows(drained);
    expect(table).toHaveLength(2);
    expect(table[1]?.[1]).toBe('agent: uploads, all 100000 in 1500 s');
  });

  it('gives proofs and Peppol documents a row each, with the curl ratio only where a baseline ran', () => {
    const table = returnPathRows({ ...returnPath, follow: 'defaults' });
    expect(table).toHaveLength(3);
    expect(table[0]).toEqual([
      'proofs of 10000 final sending events (20000 PDFs), follow defaults',
      'agent: start → all saved',
      '80 proofs/s (250 s)',
      '',
      '',
      'peak RSS 160 MiB',
    ]);
    expect(table[1]?.[5]).toBe('agent 8×');
    expect(table[2]?.[0]).toBe('10011 incoming Peppol documents');
  });

  it('adds a row for the proofs run again with the tuned settings when --compare-tuned ran', () => {
    const proofsTuned = { documents: 20_000, seconds: 200, documentsPerSecond: 100, peakRssMiB: 150 };
    const table = returnPathRows({ ...returnPath, proofsTuned });
    expect(table.map((r) => r[0])).toContain(
      'proofs of 10000 final sending events (20000 PDFs), tuned before issue 18',
    );
  });

  it('compares the proofs time with the default pacing to the tuned figure taken before issue 18', () => {
    // A report from before issue 18 (tuned settings) says nothing of the kind.
    expect(backlogReturnFigures(undefined, returnPath)).toHaveLength(1);
    expect(returnPathRows(returnPath)[0]?.[0]).toBe('proofs of 10000 final sending events (20000 PDFs), c=8');
    expect(backlogReturnFigures(undefined, { ...returnPath, follow: 'defaults' }).at(-1)).toBe(
      "Proofs with the follower's default pacing (issue 18): 250 s, 2.17× the 115.37 s the tuned settings took before (every-second schedule, 100,000 calls a minute, concurrency 8).",
    );
  });

  it('shows the first job with the settle counted apart and the phases from the log, with the targets of issue 30', () => {
    const withPhases: BacklogResult = {
      ...backlog,
      agent: {
        ...backlog.agent,
        firstCreatedMs: 2_790,
        firstCreatedBeyondSettleMs: 790,
        settleMs: 2_000,
        peakRssMiB: 260.2,
        phases: { recovered: 694, listed: 2_420, claimed: 2_734, taken: 2_762, created: 2_793 },
      },
    };
    const table = backlogRows(withPhases);
    expect(table[1]).toEqual([
      'backlog 100000 files at start-up, c=8',
      'agent: start → first job created, the 2.0 s settle counted apart',
      '0.8 s',
      '',
      '',
      'from spawn: recovered 0.7 s, folder listed 2.4 s, first claimed 2.7 s, taken 2.8 s, created 2.8 s',
    ]);
    expect(table[2]?.[1]).toBe('agent: uploads, first 60 s');
    expect(backlogReturnFigures(withPhases, undefined)[1]).toBe(
      'Backlog first submission, the 2.0 s settle counted apart, < 3.0 s: 0.8 s — met; peak RSS < 256 MiB: 260.2 MiB — NOT met.',
    );
    // A run from before issue 30 has neither the row nor the figure.
    expect(backlogRows(backlog)).toHaveLength(4);
    expect(backlogReturnFigures(backlog, undefined)).toHaveLength(1);
  });

  it("reads a phase from the agent's log line that first says it, and nothing from other lines", () => {
    const seen = {};
    const line = (msg: string, time: string) =>
      JSON.stringify({ level: 'info', time, msg, folder: 'backlog' });
    expect(phaseOf(line('folder source started', '2026-11-28T10:14:29.291Z'), seen)).toEqual({
      phase: 'listed',
      at: Date.parse('2026-11-28T10:14:29.291Z'),
    });
    expect(phaseOf(line('file uploaded', '2026-11-28T10:14:30.000Z'), seen)).toBeUndefined();
    expect(phaseOf(line('job created', '2026-11-28T10:14:31.000Z'), { created: 5 })).toBeUndefined();
    expect(phaseOf('not json', seen)).toBeUndefined();
  });

  it('leaves out of the phases a step the log did not say before the first job', () => {
    expect(phasesText({ recovered: 500, claimed: 2_600, created: 2_700 })).toBe(
      'recovered 0.5 s, first claimed 2.6 s, created 2.7 s',
    );
  });

  it('puts a failed scenario as failed and a missing one as nothing', () => {
    expect(backlogRows({ error: 'agent exited early (1)' })).toEqual([
      ['backlog', 'failed', 'agent exited early (1)', '', '', ''],
    ]);
    expect(returnPathRows(undefined)).toEqual([]);
    expect(backlogReturnFigures({ error: 'x' }, undefined)).toEqual([]);
  });

  it('adds the rows, the figures and the notes to the whole report, after the rows already there', () => {
    const report: BenchReport = { machine, quick: false, getJob: { error: 'no' }, backlog, returnPath };
    const table = rows(report);
    expect(table[1]?.[0]).toBe('GET /jobs/{id}');
    expect(table).toHaveLength(1 + 1 + 4 + 3);
    const md = markdown(report);
    expect(md).toContain('Backlog of 100000 files: first submission 4.1 s after the agent started');
    expect(md).toContain('20000 proofs archived in 250 s');
    expect(md).toContain(BACKLOG_RETURN_NOTES.split('\n')[0]);
    expect(markdown({ machine, quick: false })).not.toContain(BACKLOG_RETURN_NOTES.split('\n')[0]);
  });
});

describe('return path at two sizes (issue 30)', () => {
  const atSize = (events: number, peakRssMiB: number): ReturnPathResult => ({
    ...returnPath,
    events,
    follow: 'defaults',
    setup: { ...returnPath.setup, finalizeSeconds: events / 1000 },
    proofs: { documents: 2 * events, seconds: 100, documentsPerSecond: 60, peakRssMiB },
    peppol: { documents: 11, seconds: 1, documentsPerSecond: 11, peakRssMiB: 120 },
    sandboxStopSeconds: 0.3,
  });
  const flat = (small: number, large: number): ReturnPathFlatResult => ({
    scenario: 'return-path-flat',
    runs: [atSize(3000, small), atSize(30_000, large)],
    peakRatio: Number((large / small).toFixed(3)),
  });

  it("keeps each size's rows as in the one-size scenario and adds one row comparing their peaks", () => {
    const table = returnPathFlatRows(flat(150, 160));
    expect(table).toHaveLength(2 + 2 + 1);
    expect(table[0]?.[0]).toBe('proofs of 3000 final sending events (6000 PDFs), follow defaults');
    expect(table[2]?.[0]).toBe('proofs of 30000 final sending events (60000 PDFs), follow defaults');
    expect(table[4]).toEqual([
      "proofs' memory at 3000 / 30000 final sending events",
      'agent: peak RSS (VmHWM) of each size',
      '150 / 160 MiB',
      '',
      '',
      '1.067×; target within 10 %, < 256 MiB: met',
    ]);
  });

  it('says NOT met when the larger night peaks more than 10 % higher, or any peak reaches 256 MiB', () => {
    expect(returnPathFlatRows(flat(150, 170)).at(-1)?.[5]).toContain('NOT met');
    expect(returnPathFlatRows(flat(250, 260)).at(-1)?.[5]).toContain('NOT met');
    const unknown = { ...flat(150, 150), peakRatio: undefined };
    expect(returnPathFlatRows(unknown).at(-1)?.[5]).toContain('NOT met');
  });

  it("names the sandbox's set-up and stop times beside the verdict, and adds it all to the whole report", () => {
    expect(returnPathFlatTargets(flat(150, 160))).toEqual([
      'Memory flat with the backlog (issue 30): proofs of 3000 / 30000 events peaked at 150 / 160 MiB, ' +
        '1.067× — met. Sandbox set-up: every event final in 3 / 30 s; stopped on SIGTERM in 0.3 / 0.3 s.',
    ]);
    const report: BenchReport = { machine, quick: false, returnPathFlat: flat(150, 160) };
    expect(rows(report)).toHaveLength(1 + 5);
    expect(markdown(report)).toContain(BACKLOG_RETURN_NOTES.split('\n')[0]);
    expect(returnPathFlatRows({ error: 'sandbox exited early (1)' })).toEqual([
      ['return path, flat memory', 'failed', 'sandbox exited early (1)', '', '', ''],
    ]);
    expect(returnPathFlatTargets(undefined)).toEqual([]);
  });
});

describe('countFiles', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts matching files in nested folders and leaves out dot-named temp files', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docex-count-'));
    mkdirSync(path.join(dir, '2026-11-22', 'events'), { recursive: true });
    writeFileSync(path.join(dir, '2026-11-22', 'events', 'se_1-DELIVERY_PROOF.pdf'), 'x');
    writeFileSync(path.join(dir, '2026-11-22', 'events', 'se_1-SUBMISSION_REPORT.pdf'), 'x');
    writeFileSync(path.join(dir, '2026-11-22', 'events', '.se_2-DELIVERY_PROOF.pdf.ab12.tmp'), 'x');
    writeFileSync(path.join(dir, '2026-11-22', 'events', 'note.txt'), 'x');
    expect(countFiles(dir, '.pdf')).toBe(2);
    expect(countFiles(path.join(dir, 'missing'), '.pdf')).toBe(0);
  });
});
