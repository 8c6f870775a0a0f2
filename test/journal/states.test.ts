import { describe, expect, it } from 'vitest';
import {
  checkTransition,
  DEFAULT_UPLOAD_MARGIN_MS,
  fileChange,
  ITEM_STATES,
  type ItemKind,
  type ItemMode,
  type ItemState,
  legalTargets,
  type RecoverySubject,
  recoveryAction,
} from '../../src/journal/states.js';

type Table = Record<ItemState, ItemState[]>;

const UPLOAD_PATH: Table = {
  claimed: ['validated', 'rejected'],
  validated: ['creating', 'rejected'],
  creating: ['creating', 'created', 'rejected'],
  created: ['creating', 'uploaded', 'rejected'],
  uploaded: ['done'],
  done: [],
  rejected: [],
};
const NO_UPLOAD_PATH: Table = { ...UPLOAD_PATH, created: ['creating', 'done', 'rejected'] };
const withoutClaimed = (t: Table): Table => ({ ...t, claimed: [], validated: t.validated });

const cases: { name: string; kind: ItemKind; mode: ItemMode; table: Table }[] = [
  { name: 'single-file file', kind: 'file', mode: 'single-file', table: UPLOAD_PATH },
  { name: 'payload-pdf file without rows', kind: 'file', mode: 'payload-pdf', table: UPLOAD_PATH },
  { name: 'payload-word file without rows', kind: 'file', mode: 'payload-word', table: NO_UPLOAD_PATH },
  { name: 'payload-pdf row', kind: 'row', mode: 'payload-pdf', table: withoutClaimed(UPLOAD_PATH) },
  { name: 'payload-word row', kind: 'row', mode: 'payload-word', table: withoutClaimed(NO_UPLOAD_PATH) },
];

describe('checkTransition', () => {
  for (const c of cases) {
    for (const from of ITEM_STATES) {
      for (const to of ITEM_STATES) {
        const legal = c.table[from].includes(to);
        it(`${c.name}: ${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
          const check = checkTransition({ kind: c.kind, mode: c.mode, state: from }, to);
          expect(check.ok).toBe(legal);
          if (!check.ok) expect(check.reason.length).toBeGreaterThan(0);
        });
      }
    }
  }

  it('never lets a row become claimed', () => {
    for (const from of ITEM_STATES) {
      expect(checkTransition({ kind: 'row', mode: 'payload-word', state: from }, 'claimed').ok).toBe(false);
    }
  });

  it('a file with rows goes from validated to done only when every row is final', () => {
    const file = { kind: 'file' as const, mode: 'payload-word' as const, state: 'validated' as const };
    expect(checkTransition({ ...file, childStates: ['done', 'creating'] }, 'done')).toEqual({
      ok: false,
      reason: '1 payload row(s) are not finished',
    });
    expect(checkTransition({ ...file, childStates: ['done', 'rejected'] }, 'done').ok).toBe(true);
    expect(checkTransition({ ...file, childStates: ['validated'] }, 'rejected').ok).toBe(true);
    expect(legalTargets({ ...file, childStates: ['done'] })).toEqual(['done', 'rejected']);
  });

  it('a file with rows never takes the job path itself', () => {
    for (const state of ITEM_STATES) {
      const targets = legalTargets({ kind: 'file', mode: 'payload-pdf', state, childStates: ['validated'] });
      expect(targets).toEqual(state === 'validated' ? ['rejected'] : []);
    }
  });
});

describe('recoveryAction', () => {
  const now = Date.parse('2026-11-21T10:00:00.000Z');
  const base: RecoverySubject = {
    kind: 'file',
    mode: 'single-file',
    state: 'claimed',
    attempt: 0,
    hasUploadUrl: false,
  };
  const created = (deadline: number, extra: Partial<RecoverySubject> = {}): RecoverySubject => ({
    ...base,
    state: 'created',
    attempt: 1,
    jobId: 'job-1',
    jobName: 'a.pdf.dx-0123456789ab-abcdef',
    uploadDeadline: deadline,
    hasUploadUrl: true,
    ...extra,
  });

  it('claimed: validate the file again', () => {
    expect(recoveryAction(base, now)).toEqual({ kind: 'validate' });
  });

  it('validated single-file: create (no request was sent yet)', () => {
    expect(recoveryAction({ ...base, state: 'validated' }, now)).toEqual({ kind: 'create' });
  });

  it('validated payload file without rows: validate again to record its rows', () => {
    expect(recoveryAction({ ...base, mode: 'payload-word', state: 'validated' }, now)).toEqual({
      kind: 'validate',
    });
  });

  it('validated payload row: create', () => {
    expect(recoveryAction({ ...base, kind: 'row', mode: 'payload-pdf', state: 'validated' }, now)).toEqual({
      kind: 'create',
    });
  });

  it('validated file with rows: resume rows while any is open, finish when all are final', () => {
    const file = { ...base, mode: 'payload-word' as const, state: 'validated' as const };
    expect(recoveryAction({ ...file, childStates: ['done', 'creating', 'validated'] }, now)).toEqual({
      kind: 'resume-rows',
      pending: 2,
    });
    expect(recoveryAction({ ...file, childStates: ['done', 'rejected'] }, now)).toEqual({ kind: 'finish' });
  });

  it('creating: look the job up by its recorded name before creating again', () => {
    const action = recoveryAction(
      { ...base, state: 'creating', attempt: 2, jobName: 'x.dx-0123456789ab-abcdef-a2' },
      now,
    );
    expect(action).toEqual({ kind: 'lookup-then-create', jobName: 'x.dx-0123456789ab-abcdef-a2' });
  });

  it('created with the deadline beyond the margin: upload', () => {
    const deadline = now + DEFAULT_UPLOAD_MARGIN_MS + 1;
    expect(recoveryAction(created(deadline), now)).toEqual({
      kind: 'upload',
      jobId: 'job-1',
      msLeft: deadline - now,
    });
  });

  it('created with exactly the margin left: recreate (the upload might not finish in time)', () => {
    expect(recoveryAction(created(now + DEFAULT_UPLOAD_MARGIN_MS), now)).toEqual({
      kind: 'recreate',
      previousJobId: 'job-1',
      why: 'near-deadline',
    });
  });

  it('created past the deadline: recreate as expired', () => {
    expect(recoveryAction(created(now), now)).toMatchObject({ kind: 'recreate', why: 'expired' });
    expect(recoveryAction(created(now - 1), now)).toMatchObject({ kind: 'recreate', why: 'expired' });
  });

  it('the margin is an option', () => {
    expect(recoveryAction(created(now + 60_000), now, { marginMs: 30_000 })).toMatchObject({
      kind: 'upload',
    });
    expect(recoveryAction(created(now + 60_000), now, { marginMs: 60_000 })).toMatchObject({
      kind: 'recreate',
    });
  });

  it('created without a kept URL: recreate', () => {
    expect(recoveryAction(created(now + 3_600_000, { hasUploadUrl: false }), now)).toEqual({
      kind: 'recreate',
      previousJobId: 'job-1',
      why: 'no-url',
    });
  });

  it('created payload-word (no upload step): finish', () => {
    const item = created(0, {
      mode: 'payload-word',
      kind: 'row',
      hasUploadUrl: false,
      uploadDeadline: undefined,
    });
    expect(recoveryAction(item, now)).toEqual({ kind: 'finish' });
  });

  it('uploaded: finish (move the file)', () => {
    expect(recoveryAction({ ...base, state: 'uploaded', jobId: 'job-1', attempt: 1 }, now)).toEqual({
      kind: 'finish',
    });
  });

  it('done and rejected: nothing', () => {
    expect(recoveryAction({ ...base, state: 'done' }, now)).toEqual({ kind: 'none' });
    expect(recoveryAction({ ...base, state: 'rejected' }, now)).toEqual({ kind: 'none' });
  });
});

describe('fileChange', () => {
  const recorded = { size: 10, mtimeMs: 1_700_000_000_123.25, sha256: 'aa' };

  it('same size, mtime (to the millisecond) and hash: unchanged', () => {
    expect(fileChange(recorded, { size: 10, mtimeMs: 1_700_000_000_123.9, sha256: 'aa' })).toEqual({
      changed: false,
    });
    expect(fileChange(recorded, { size: 10, mtimeMs: 1_700_000_000_123 })).toEqual({ changed: false });
  });

  it('names what changed', () => {
    expect(fileChange(recorded, { ...recorded, size: 11 })).toEqual({ changed: true, what: 'size' });
    expect(fileChange(recorded, { ...recorded, mtimeMs: recorded.mtimeMs + 1 })).toEqual({
      changed: true,
      what: 'mtime',
    });
    expect(fileChange(recorded, { ...recorded, sha256: 'bb' })).toEqual({ changed: true, what: 'content' });
  });
});
