import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocexError } from '../../src/core/errors.js';
import type { JournalItem, JournalStore } from '../../src/journal/index.js';
import { archiveItem, placeRejected } from '../../src/pipeline/finish.js';
import { archiveDayDir, errorRecord, resultRecord } from '../../src/pipeline/outcome-files.js';
import type { FolderRuntime, StepContext } from '../../src/pipeline/types.js';

// An SFTP folder shared by two agents: agent X archived its spool copy of a file and was killed
// before it recorded `done`; agent Y took the item over with a copy downloaded again.
const NOW = Date.parse('2026-11-27T10:00:00Z');
const DAY_MS = 86_400_000;

let root: string;
let archiveDir: string;
let spool: string;
let moves: string[];

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'docex-archive-'));
  archiveDir = path.join(root, 'archive');
  spool = path.join(root, 'spool');
  mkdirSync(spool, { recursive: true });
  moves = [];
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function runtime(): FolderRuntime {
  return {
    config: {
      name: 'invoices',
      archiveDir,
      errorDir: path.join(root, 'error'),
      source: {
        type: 'sftp',
        host: 'sftp.example',
        port: 22,
        username: 'erp',
        path: '/outbox',
        spoolDir: spool,
      },
      stability: { kind: 'size-stable' },
    },
    mode: 'single-file',
  } as unknown as FolderRuntime;
}

/** `leaseLost`: another agent took the file over while this one was frozen. */
function context(now: number, leaseLost = false): StepContext {
  const journal = {
    transition: async (id: number, state: string) => {
      moves.push(`${id}:${state}`);
      return { id, state } as unknown as JournalItem;
    },
    placeAlone: async <T>(_item: JournalItem, place: () => Promise<T>) => {
      if (leaseLost) throw new DocexError('DOCEX_LEASE_LOST', 'another agent holds the file now');
      return place();
    },
  } as unknown as JournalStore;
  return { journal, clock: { now: () => now }, log: pino({ level: 'silent' }) } as unknown as StepContext;
}

function item(epoch: number, overrides: Partial<JournalItem> = {}): JournalItem {
  const claimedPath = path.join(spool, 'invoice-7.pdf');
  writeFileSync(claimedPath, '%PDF-1.4 copy');
  return {
    id: 7,
    folder: 'invoices',
    fileName: 'invoice-7.pdf',
    claimedPath,
    sha256: 'a'.repeat(64),
    size: 13,
    jobId: 'job_1',
    jobName: 'docex-aaaa-1',
    createdAt: NOW - 60_000,
    updatedAt: NOW - 30_000,
    state: 'uploaded',
    epoch,
    ...overrides,
  } as JournalItem;
}

/** What agent X left: its copy placed in the archive with its result record. */
function archivedBefore(earlier: JournalItem, at: number, name = earlier.fileName): string {
  const day = archiveDayDir(archiveDir, at);
  mkdirSync(day, { recursive: true });
  writeFileSync(path.join(day, name), '%PDF-1.4 copy');
  writeFileSync(path.join(day, `${name}.result.json`), JSON.stringify(resultRecord(earlier, at)));
  return path.join(day, name);
}

const dataFiles = (dir: string) => readdirSync(dir).filter((n) => !n.endsWith('.json'));

describe('archiving a file taken over from another agent', () => {
  it('drops the taken-over copy when the earlier holder archived its own copy, and records done', async () => {
    const taken = item(2);
    archivedBefore(taken, NOW - 20_000);
    await archiveItem(context(NOW), runtime(), taken);
    expect(dataFiles(archiveDayDir(archiveDir, NOW))).toEqual(['invoice-7.pdf']);
    expect(existsSync(taken.claimedPath!)).toBe(false);
    expect(moves).toEqual(['7:done']);
  });

  it('finds the earlier placement on the day before when midnight passed between the two agents', async () => {
    const now = Date.parse('2026-11-28T00:00:05Z');
    const taken = item(3, { updatedAt: now - 20_000 });
    const earlierDay = archivedBefore(taken, now - 10_000);
    await archiveItem(context(now), runtime(), taken);
    expect(path.dirname(earlierDay)).toBe(archiveDayDir(archiveDir, now - DAY_MS));
    expect(existsSync(archiveDayDir(archiveDir, now))).toBe(false);
    expect(existsSync(taken.claimedPath!)).toBe(false);
  });

  it('finds it under a numbered name when another file of the same name was archived first', async () => {
    const taken = item(2);
    archivedBefore({ ...taken, createdAt: NOW - 3_600_000, sha256: 'b'.repeat(64) }, NOW - 50_000);
    archivedBefore(taken, NOW - 20_000, 'invoice-7.2.pdf');
    await archiveItem(context(NOW), runtime(), taken);
    expect(dataFiles(archiveDayDir(archiveDir, NOW)).sort()).toEqual(['invoice-7.2.pdf', 'invoice-7.pdf']);
    expect(existsSync(taken.claimedPath!)).toBe(false);
  });

  it('archives the copy beside a same-named file of another drop', async () => {
    const taken = item(2);
    archivedBefore({ ...taken, createdAt: NOW - 3_600_000 }, NOW - 50_000);
    await archiveItem(context(NOW), runtime(), taken);
    expect(dataFiles(archiveDayDir(archiveDir, NOW)).sort()).toEqual(['invoice-7.2.pdf', 'invoice-7.pdf']);
    expect(moves).toEqual(['7:done']);
  });

  it('places nothing when the lease was lost while the agent was frozen: the agent that took the file over places its own copy', async () => {
    const held = item(1);
    await expect(archiveItem(context(NOW, true), runtime(), held)).rejects.toMatchObject({
      code: 'DOCEX_LEASE_LOST',
    });
    expect(existsSync(archiveDayDir(archiveDir, NOW))).toBe(false);
    expect(existsSync(held.claimedPath!)).toBe(true);
    expect(moves).toEqual([]);
  });

  it('drops the taken-over copy of a refused file when the earlier holder placed its own copy in the error folder', async () => {
    const taken = item(2, {
      state: 'rejected',
      rejectCode: 'DOCEX_INPUT_NOT_UBL',
      rejectReason: 'not a UBL document',
    });
    const errorDir = path.join(root, 'error');
    mkdirSync(errorDir, { recursive: true });
    writeFileSync(path.join(errorDir, taken.fileName), '%PDF-1.4 copy');
    writeFileSync(
      path.join(errorDir, `${taken.fileName}.error.json`),
      JSON.stringify(errorRecord(taken, NOW - 20_000)),
    );
    await placeRejected(context(NOW), runtime(), taken);
    expect(dataFiles(errorDir)).toEqual(['invoice-7.pdf']);
    expect(existsSync(taken.claimedPath!)).toBe(false);
  });

  it('places a refused copy beside a same-named refused file of another drop', async () => {
    const taken = item(2, {
      state: 'rejected',
      rejectCode: 'DOCEX_INPUT_NOT_UBL',
      rejectReason: 'not a UBL document',
    });
    const errorDir = path.join(root, 'error');
    mkdirSync(errorDir, { recursive: true });
    writeFileSync(path.join(errorDir, taken.fileName), '%PDF-1.4 other');
    writeFileSync(
      path.join(errorDir, `${taken.fileName}.error.json`),
      JSON.stringify(errorRecord({ ...taken, createdAt: NOW - 3_600_000 }, NOW - 50_000)),
    );
    await placeRejected(context(NOW), runtime(), taken);
    expect(
      dataFiles(errorDir)
        .filter((n) => !n.endsWith('.txt'))
        .sort(),
    ).toEqual(['invoice-7.2.pdf', 'invoice-7.pdf']);
  });
});
