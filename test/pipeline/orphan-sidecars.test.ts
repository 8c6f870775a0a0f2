/**
 * The orphan-sidecar watcher alone, on real files: a sidecar whose PDF never comes goes to the
 * error folder once it waited SIDECAR_WAIT_MS (a manual clock); one whose PDF is beside it stays.
 * Looks come on real timers of 1 ms; the test waits for a count of looks, never for a time.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { hasPdfBeside, OrphanSidecars } from '../../src/pipeline/orphan-sidecars.js';
import { SIDECAR_WAIT_MS } from '../../src/pipeline/payload-pdf.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';
import { waitFor } from '../support/wait-for.js';
import { listFiles } from './support/agent-harness.js';

const dirs: string[] = [];
const watchers: OrphanSidecars[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setUp(folders = ['letters']) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-orphans-'));
  dirs.push(dir);
  const clock = new ManualClock();
  let looks = 0;
  const watcher = new OrphanSidecars({
    clock,
    log: silentLogger(),
    retryDelayMs: () => {
      looks++;
      return 1;
    },
  });
  watchers.push(watcher);
  const runtimes = new Map(
    folders.map((name) => {
      const processing = path.join(dir, name, '.processing');
      mkdirSync(processing, { recursive: true });
      const runtime = {
        config: { name, workflowId: 'wf_letters', errorDir: path.join(dir, 'error', name) },
      } as unknown as FolderRuntime;
      return [name, { runtime, processing }] as const;
    }),
  );
  /** Claims `name` into the folder's `.processing/` and hands it to the watcher. */
  const drop = (name: string, folder = folders[0]!) => {
    const { runtime, processing } = runtimes.get(folder)!;
    const claimedPath = path.join(processing, name);
    writeFileSync(claimedPath, '{"payload":{}}');
    watcher.watch(runtime, { name, originalPath: path.join(dir, folder, name), claimedPath });
    return claimedPath;
  };
  return { dir, clock, watcher, drop, looks: () => looks };
}

describe('OrphanSidecars', () => {
  it('refuses a sidecar left alone past the sidecar wait, into the error folder with its reason', async () => {
    const { dir, clock, watcher, drop } = setUp();
    const sidecar = drop('alone.json');
    clock.advance(SIDECAR_WAIT_MS);
    const errorDir = path.join(dir, 'error', 'letters');
    await waitFor(() => listFiles(errorDir).includes('alone.json'));
    expect(existsSync(sidecar)).toBe(false);
    const record = JSON.parse(readFileSync(path.join(errorDir, 'alone.json.error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'DOCEX_INPUT_SIDECAR_ORPHAN', file: 'alone.json' });
    expect(watcher.watched).toBe(0);
  });

  it('keeps looking, and leaves in place, a sidecar that has not waited its time yet or whose PDF is beside it', async () => {
    const { dir, clock, drop, looks } = setUp();
    const young = drop('young.json');
    await waitFor(() => looks() >= 5);
    expect(existsSync(young)).toBe(true);

    const paired = drop('paired.json');
    writeFileSync(path.join(path.dirname(paired), 'paired.PDF'), '%PDF-1.7');
    clock.advance(SIDECAR_WAIT_MS - 1);
    const before = looks();
    await waitFor(() => looks() >= before + 5);
    expect(existsSync(paired)).toBe(true);
    expect(existsSync(young)).toBe(true);
    expect(listFiles(path.join(dir, 'error', 'letters'))).toEqual([]);
  });

  it('stops watching a sidecar that left `.processing/` (its PDF’s item moved it along)', async () => {
    const { watcher, drop } = setUp();
    const sidecar = drop('moved.json');
    rmSync(sidecar);
    await waitFor(() => watcher.watched === 0);
  });

  it('cancels one folder’s watches only, and watches nothing once stopped', () => {
    const { watcher, drop } = setUp(['a', 'b']);
    drop('one.json', 'a');
    drop('two.json', 'b');
    drop('two.json', 'b');
    expect(watcher.watched).toBe(2);
    watcher.cancel('a');
    expect(watcher.watched).toBe(1);
    watcher.stop();
    expect(watcher.watched).toBe(0);
    drop('three.json', 'a');
    expect(watcher.watched).toBe(0);
  });

  it('finds the PDF beside a sidecar whatever the case of its .pdf extension', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-beside-'));
    dirs.push(dir);
    expect(await hasPdfBeside(path.join(dir, 'a.json'))).toBe(false);
    writeFileSync(path.join(dir, 'a.pdf'), '');
    writeFileSync(path.join(dir, 'b.PDF'), '');
    expect(await hasPdfBeside(path.join(dir, 'a.json'))).toBe(true);
    expect(await hasPdfBeside(path.join(dir, 'b.json'))).toBe(true);
  });
});
