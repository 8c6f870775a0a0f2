/**
 * The send-window holds of the pipeline: one timer per folder, the hold recorded on the file in a
 * real journal, released when the (manual) clock says the window is open. Timers are vitest's fake
 * ones, advanced by the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import type { JournalItem } from '../../src/journal/index.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import {
  checkSendWindow,
  SEND_WINDOW_CODE,
  SendWindowHolds,
  WindowClosed,
} from '../../src/pipeline/send-windows.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';
import { workflow } from './payload/workflows.js';

const PDF_EMAIL = workflow('wf_pdf_email', 'PDF', ['EMAIL']);
// Mon-Fri 07:00-20:00 UTC.
const WINDOW = { days: 'Mon-Fri', from: '07:00', to: '20:00', timeZone: 'UTC' };
// Friday 15 January 2027, 21:00 UTC: closed until Monday 07:00.
const FRIDAY_NIGHT = Date.parse('2027-01-15T21:00:00Z');
const MONDAY_OPENING = Date.parse('2027-01-18T07:00:00Z');

function runtimeOf(name: string, window?: typeof WINDOW): FolderRuntime {
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    folders: [
      {
        name,
        source: { type: 'local', path: `in/${name}` },
        workflowId: PDF_EMAIL.id,
        ...(window ? { window } : {}),
      },
    ],
  });
  return { config: config.folders[0]!, mode: 'single-file', workflow: PDF_EMAIL };
}

let dir: string;
let journal: SqliteJournal;
let clock: ManualClock;
let files = 0;

async function validated(folder: string): Promise<JournalItem> {
  files++;
  const result = await journal.recordClaim({
    folder,
    sourcePath: `/in/${folder}/f${files}.pdf`,
    claimedPath: `/in/${folder}/.processing/f${files}.pdf`,
    fileName: `f${files}.pdf`,
    size: 1,
    mtimeMs: 1,
    sha256: files.toString(16).padStart(64, '0'),
    workflowId: PDF_EMAIL.id,
    mode: 'single-file',
  });
  // Checked: the next step is its create.
  return journal.transition(result.item.id, 'validated', { note: 'pdf' });
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-windows-'));
  clock = new ManualClock(FRIDAY_NIGHT);
  journal = SqliteJournal.open(path.join(dir, 'journal.sqlite'), { clock, log: silentLogger() });
});
afterEach(async () => {
  vi.useRealTimers();
  await journal.close();
  rmSync(dir, { recursive: true, force: true });
});

function makeHolds(folders: Map<string, FolderRuntime>) {
  const resumed: number[] = [];
  const holds = new SendWindowHolds({
    journal,
    clock,
    log: silentLogger(),
    folders,
    recheckMs: 60_000,
    resume: (id) => resumed.push(id),
    onReleased: () => {},
  });
  return { holds, resumed };
}

describe('checkSendWindow', () => {
  it('lets a folder without a window create at any hour and stops one whose window is closed, saying until when', () => {
    expect(() => checkSendWindow({ clock }, runtimeOf('any'))).not.toThrow();
    let thrown: unknown;
    try {
      checkSendWindow({ clock }, runtimeOf('office', WINDOW));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(WindowClosed);
    expect(thrown).toMatchObject({
      code: SEND_WINDOW_CODE,
      opensAt: MONDAY_OPENING,
      message: 'send window closed until 2027-01-18T07:00:00.000Z',
    });
  });
});

describe('SendWindowHolds', () => {
  it('records the opening as the file’s next try, and releases every held file of the folder once the clock reaches it', async () => {
    const folders = new Map([['office', runtimeOf('office', WINDOW)]]);
    const { holds, resumed } = makeHolds(folders);
    const a = await validated('office');
    const b = await validated('office');
    await holds.hold(a, MONDAY_OPENING);
    await holds.hold(b, MONDAY_OPENING);
    expect(await journal.get(a.id)).toMatchObject({
      lastFailureCode: SEND_WINDOW_CODE,
      nextTryAt: MONDAY_OPENING,
    });
    expect(holds.waiting).toBe(2);
    // The timer looks again every minute; the clock has not moved: still held.
    vi.advanceTimersByTime(60_000);
    expect(resumed).toEqual([]);
    // The clock jumps to the opening (a suspended host, a moved test clock): the next look releases both.
    clock.set(MONDAY_OPENING);
    vi.advanceTimersByTime(60_000);
    expect(resumed).toEqual([a.id, b.id]);
    expect(holds.waiting).toBe(0);
  });

  it('does not count a hold as a failed try: a file held at several openings keeps its count, so no later failure parks it sooner', async () => {
    const runtime = runtimeOf('office', WINDOW);
    const { holds } = makeHolds(new Map([['office', runtime]]));
    const item = await validated('office');
    await holds.hold(item, MONDAY_OPENING);
    // Held again at the next opening (a payload file whose rows went on the day before).
    await holds.hold((await journal.get(item.id))!, MONDAY_OPENING + 86_400_000);
    expect(await journal.get(item.id)).toMatchObject({
      failedTries: 0,
      lastFailureCode: SEND_WINDOW_CODE,
      nextTryAt: MONDAY_OPENING + 86_400_000,
    });
    holds.cancelAll();
  });

  it('holds a file found in the journal with its window still closed, without writing again', async () => {
    const runtime = runtimeOf('office', WINDOW);
    const { holds } = makeHolds(new Map([['office', runtime]]));
    const item = await validated('office');
    await holds.hold(item, MONDAY_OPENING);
    const recorded = (await journal.get(item.id))!;
    holds.cancelAll();
    expect(holds.holdsAgain(runtime, recorded)).toBe(true);
    expect((await journal.get(item.id))?.failedTries).toBe(recorded.failedTries);
    holds.cancelAll();
    // Open now: not held again, the file goes on to its create.
    clock.set(MONDAY_OPENING);
    expect(holds.holdsAgain(runtime, recorded)).toBe(false);
    expect(holds.waiting).toBe(0);
  });

  it('does not hold again a file whose job was created before a restart: its upload goes on', async () => {
    const runtime = runtimeOf('office', WINDOW);
    const { holds } = makeHolds(new Map([['office', runtime]]));
    const item = await validated('office');
    await holds.hold(item, MONDAY_OPENING);
    const recorded = (await journal.get(item.id))!;
    holds.cancelAll();
    expect(holds.holdsAgain(runtime, { ...recorded, state: 'created' })).toBe(false);
    expect(holds.holdsAgain(runtime, { ...recorded, state: 'creating' })).toBe(true);
  });

  it('releases the files of a folder whose window a reload removed, and drops those of a removed folder', async () => {
    const folders = new Map([
      ['office', runtimeOf('office', WINDOW)],
      ['gone', runtimeOf('gone', WINDOW)],
    ]);
    const { holds, resumed } = makeHolds(folders);
    const a = await validated('office');
    const b = await validated('gone');
    await holds.hold(a, MONDAY_OPENING);
    await holds.hold(b, MONDAY_OPENING);
    folders.set('office', runtimeOf('office'));
    folders.delete('gone');
    vi.advanceTimersByTime(60_000);
    expect(resumed).toEqual([a.id]);
    expect(holds.waiting).toBe(0);
  });
});
