import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isDocexError } from '../../../src/core/errors.js';
import {
  CLAIM_NOTES_DIR,
  claimFile,
  forgetClaimNote,
  recoverProcessing,
  releaseClaim,
  removeEmptiedClaimDirs,
  renameIntoClaimDir,
} from '../../../src/sources/local/claim.js';

let dir: string;
let processing: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-claim-'));
  // A drop folder of the 2770 group model (systemd/README.md).
  chmodSync(dir, 0o2770);
  processing = path.join(dir, '.processing');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function drop(name: string, content = 'pdf bytes'): { path: string; size: number; mtimeMs: number } {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  const st = statSync(p);
  return { path: p, size: st.size, mtimeMs: st.mtimeMs };
}

describe('claimFile', () => {
  it('claims a 255-byte name dropped twice under a shortened numbered name, not ENAMETOOLONG', async () => {
    const name = `${'é'.repeat(124)}abc.pdf`;
    expect(Buffer.byteLength(name)).toBe(255);
    const first = drop(name, 'first');
    expect(await claimFile(first.path, processing, first)).toMatchObject({ outcome: 'claimed' });
    const second = drop(name, 'second');
    const r = await claimFile(second.path, processing, second);
    expect(r).toMatchObject({ outcome: 'claimed' });
    const claimed = path.basename((r as { claimedPath: string }).claimedPath);
    expect(claimed).toMatch(/^é+a?b?c?\.2\.pdf$/);
    expect(Buffer.byteLength(claimed)).toBeLessThanOrEqual(255);
    expect(readFileSync(path.join(processing, claimed), 'utf8')).toBe('second');
  });

  it('moves the file into .processing (made 2770 like its drop folder) and reports its stamp', async () => {
    const f = drop('invoice 2026 é.pdf');
    const r = await claimFile(f.path, processing, f);
    expect(r).toEqual({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'invoice 2026 é.pdf'),
      size: f.size,
      mtimeMs: f.mtimeMs,
    });
    expect(existsSync(f.path)).toBe(false);
    expect(statSync(processing).mode & 0o7777).toBe(0o2770);
  });

  it('makes .processing again after an operator removed it', async () => {
    const first = drop('first.pdf');
    expect((await claimFile(first.path, processing, first)).outcome).toBe('claimed');
    rmSync(processing, { recursive: true });
    const second = drop('second.pdf');
    expect(await claimFile(second.path, processing, second)).toMatchObject({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'second.pdf'),
    });
    expect(statSync(processing).mode & 0o7777).toBe(0o2770);
  });

  it('lets exactly one of many racing claimers win the same file', async () => {
    for (let round = 0; round < 20; round++) {
      const f = drop(`race-${round}.pdf`);
      const results = await Promise.all(Array.from({ length: 4 }, () => claimFile(f.path, processing, f)));
      expect(results.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'lost')).toHaveLength(3);
    }
    expect(readdirSync(processing)).toHaveLength(20);
  });

  it('reports lost when the file is already gone', async () => {
    expect(await claimFile(path.join(dir, 'gone.pdf'), processing, { size: 1, mtimeMs: 1 })).toEqual({
      outcome: 'lost',
    });
  });

  it('keeps a leftover of the same name in .processing and claims under a numbered name', async () => {
    await fs.mkdir(processing);
    writeFileSync(path.join(processing, 'a.pdf'), 'old');
    const f = drop('a.pdf', 'new');
    const r = await claimFile(f.path, processing, f);
    expect(r.outcome).toBe('claimed');
    expect(r.outcome === 'claimed' && path.basename(r.claimedPath)).toBe('a.2.pdf');
    expect(readFileSync(path.join(processing, 'a.pdf'), 'utf8')).toBe('old');
  });

  it('notes the dropped name of a file claimed under a numbered name, and recovery reads it back', async () => {
    const first = drop('x-credit.pdf', 'first');
    await claimFile(first.path, processing, first);
    const second = drop('x-credit.pdf', 'second, longer');
    const r = await claimFile(second.path, processing, second);
    expect(r.outcome === 'claimed' && path.basename(r.claimedPath)).toBe('x-credit.2.pdf');
    // A file genuinely dropped under a numbered-looking name has no note: its own name it is.
    const genuine = drop('report.2.pdf', 'genuine');
    await claimFile(genuine.path, processing, genuine);
    const found = await recoverProcessing(dir);
    expect(found.map((f) => [f.name, f.originalName])).toEqual([
      ['report.2.pdf', undefined],
      ['x-credit.2.pdf', 'x-credit.pdf'],
      ['x-credit.pdf', undefined],
    ]);
    await forgetClaimNote(path.join(processing, 'x-credit.2.pdf'));
    // The last note gone, its folder goes too: .processing holds only claimed files.
    expect(existsSync(path.join(processing, CLAIM_NOTES_DIR))).toBe(false);
    expect((await recoverProcessing(dir)).map((f) => f.originalName)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('leaves no note when another claimer took the file first', async () => {
    await fs.mkdir(processing);
    writeFileSync(path.join(processing, 'a.pdf'), 'in flight');
    const f = drop('a.pdf', 'new');
    const lost = await claimFile(f.path, processing, f, async () => {
      throw Object.assign(new Error('gone'), { code: 'ENOENT' });
    });
    expect(lost).toEqual({ outcome: 'lost' });
    expect(readdirSync(processing)).toEqual(['a.pdf']);
  });

  it("ignores a note of an earlier file of the numbered name: the stamp is another file's", async () => {
    const first = drop('a.pdf', 'first');
    await claimFile(first.path, processing, first);
    const second = drop('a.pdf', 'second');
    await claimFile(second.path, processing, second);
    // a.2.pdf left .processing without its note removed; a file genuinely named a.2.pdf came in.
    rmSync(path.join(processing, 'a.2.pdf'));
    writeFileSync(path.join(processing, 'a.2.pdf'), 'another size entirely');
    const found = await recoverProcessing(dir);
    expect(found.map((f) => [f.name, f.originalName])).toEqual([
      ['a.2.pdf', undefined],
      ['a.pdf', undefined],
    ]);
  });

  it('reports changed when size or mtime differ from the stable observation', async () => {
    const f = drop('growing.pdf', 'abc');
    const r = await claimFile(f.path, processing, { size: 2, mtimeMs: f.mtimeMs });
    expect(r.outcome).toBe('changed');
  });

  it('wraps other rename failures in DOCEX_SOURCE_CLAIM_FAILED', async () => {
    const f = drop('x.pdf');
    const eacces = async () => {
      throw Object.assign(new Error('denied'), { code: 'EACCES' });
    };
    await expect(claimFile(f.path, processing, f, eacces)).rejects.toSatisfy((e) =>
      isDocexError(e, 'DOCEX_SOURCE_CLAIM_FAILED'),
    );
  });
});

describe('claimFile into a sub-path (recursive folders)', () => {
  it('claims into the same sub-path of .processing, each level made 2770 like .processing', async () => {
    await fs.mkdir(path.join(dir, 'acme', 'invoices'), { recursive: true });
    const file = drop(path.join('acme', 'invoices', 'x.pdf'));
    const result = await claimFile(file.path, processing, file, fs.rename, ['acme', 'invoices']);
    expect(result).toMatchObject({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'acme', 'invoices', 'x.pdf'),
    });
    expect(statSync(path.join(processing, 'acme')).mode & 0o7777).toBe(0o2770);
  });

  it('notes the dropped name of a numbered claim beside it in its sub-folder, and recovery reads it back there', async () => {
    await fs.mkdir(path.join(dir, 'acme'), { recursive: true });
    const first = drop(path.join('acme', 'x.pdf'), 'first');
    await claimFile(first.path, processing, first, fs.rename, ['acme']);
    const second = drop(path.join('acme', 'x.pdf'), 'second, while the first is in flight');
    const result = await claimFile(second.path, processing, second, fs.rename, ['acme']);
    expect(result).toMatchObject({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'acme', 'x.2.pdf'),
    });
    const recovered = await recoverProcessing(dir, { recursive: true });
    expect(recovered.map((f) => [f.relativePath, f.originalName])).toEqual([
      ['acme/x.2.pdf', 'x.pdf'],
      ['acme/x.pdf', undefined],
    ]);
  });

  it('fails for now, not as an unsafe folder, while a claimed file stands where a sub-folder goes', async () => {
    await fs.mkdir(path.join(dir, 'acme'), { recursive: true });
    await fs.mkdir(processing, { recursive: true });
    writeFileSync(path.join(processing, 'acme'), 'a file claimed from the top, named acme');
    const file = drop(path.join('acme', 'x.pdf'));
    const err = await claimFile(file.path, processing, file, fs.rename, ['acme']).catch((e: unknown) => e);
    expect(isDocexError(err, 'DOCEX_SOURCE_CLAIM_FAILED')).toBe(true);
    expect((err as { details?: Record<string, unknown> }).details?.['errno']).toBe('ENOTDIR');
    expect(existsSync(file.path)).toBe(true);
  });
});

describe('the sub-folders of .processing a claimed file leaves empty', () => {
  it('go with it, each emptied parent too, never .processing itself nor the drop folder’s own', async () => {
    await fs.mkdir(path.join(dir, 'acme', 'invoices'), { recursive: true });
    const file = drop(path.join('acme', 'invoices', 'x.pdf'));
    const r = await claimFile(file.path, processing, file, fs.rename, ['acme', 'invoices']);
    if (r.outcome !== 'claimed') throw new Error(r.outcome);
    await fs.rm(r.claimedPath); // archived
    await removeEmptiedClaimDirs(processing, r.claimedPath);
    expect(readdirSync(processing)).toEqual([]);
    expect(existsSync(path.join(dir, 'acme', 'invoices'))).toBe(true);
    // Nothing is removed but below .processing: not the drop folder's sub-folders, not .processing.
    await removeEmptiedClaimDirs(processing, path.join(dir, 'acme', 'invoices', 'x.pdf'));
    await removeEmptiedClaimDirs(processing, path.join(processing, 'x.pdf'));
    expect(existsSync(path.join(dir, 'acme', 'invoices'))).toBe(true);
    expect(existsSync(processing)).toBe(true);
  });

  it('stay while they hold a file (ENOTEMPTY), their emptied claim-note folder does not', async () => {
    await fs.mkdir(path.join(dir, 'acme'), { recursive: true });
    const first = drop(path.join('acme', 'x.pdf'), 'first');
    await claimFile(first.path, processing, first, fs.rename, ['acme']);
    const second = drop(path.join('acme', 'x.pdf'), 'second, numbered');
    const r = await claimFile(second.path, processing, second, fs.rename, ['acme']);
    if (r.outcome !== 'claimed') throw new Error(r.outcome);
    await forgetClaimNote(r.claimedPath); // the claim was recorded
    await fs.rm(r.claimedPath);
    await removeEmptiedClaimDirs(processing, r.claimedPath);
    expect(readdirSync(path.join(processing, 'acme'))).toEqual(['x.pdf']);
    await fs.rm(path.join(processing, 'acme', 'x.pdf'));
    await removeEmptiedClaimDirs(processing, path.join(processing, 'acme', 'x.pdf'));
    expect(readdirSync(processing)).toEqual([]);
  });

  it('made again by a claim whose sub-folder was removed between its mkdir and its rename', async () => {
    await fs.mkdir(path.join(dir, 'acme', 'invoices'), { recursive: true });
    const file = drop(path.join('acme', 'invoices', 'x.pdf'));
    let removed = 0;
    // The last file of acme/ finished in between: its folders went as it left.
    const racing = async (from: string, to: string) => {
      if (removed++ === 0) await removeEmptiedClaimDirs(processing, path.join(path.dirname(to), 'done.pdf'));
      await fs.rename(from, to);
    };
    const r = await claimFile(file.path, processing, file, racing, ['acme', 'invoices']);
    expect(removed).toBe(2);
    expect(r).toMatchObject({
      outcome: 'claimed',
      claimedPath: path.join(processing, 'acme', 'invoices', 'x.pdf'),
    });
    expect(existsSync(path.join(processing, 'acme', 'invoices', 'x.pdf'))).toBe(true);
  });

  it('made again for a spool download renamed in whose sub-folder was removed after its mkdir (renameIntoClaimDir)', async () => {
    const staged = drop('staged.ready', 'downloaded bytes');
    let removed = 0;
    const racing = async (from: string, to: string) => {
      if (removed++ === 0) await removeEmptiedClaimDirs(processing, path.join(path.dirname(to), 'done.pdf'));
      await fs.rename(from, to);
    };
    const target = await renameIntoClaimDir(processing, ['acme', 'invoices'], staged.path, 'x.pdf', racing);
    expect(removed).toBe(2);
    expect(target).toBe(path.join(processing, 'acme', 'invoices', 'x.pdf'));
    expect(readFileSync(target, 'utf8')).toBe('downloaded bytes');
  });

  it('found empty by recovery are removed, those holding a file kept', async () => {
    await fs.mkdir(path.join(processing, 'gone', 'deep', CLAIM_NOTES_DIR), { recursive: true });
    await fs.mkdir(path.join(processing, 'kept', 'empty'), { recursive: true });
    writeFileSync(path.join(processing, 'kept', 'left.pdf'), 'left by a crash');
    const found = await recoverProcessing(dir, { recursive: true });
    expect(found.map((f) => f.relativePath)).toEqual(['kept/left.pdf']);
    expect(readdirSync(processing)).toEqual(['kept']);
    expect(readdirSync(path.join(processing, 'kept'))).toEqual(['left.pdf']);
  });
});

describe('releaseClaim', () => {
  it('puts a claimed file back under its name', async () => {
    const f = drop('back.pdf');
    const r = await claimFile(f.path, processing, f);
    expect(r.outcome === 'claimed' && (await releaseClaim(r.claimedPath, f.path))).toBe(true);
    expect(existsSync(f.path)).toBe(true);
    expect(readdirSync(processing)).toEqual([]);
  });

  it('never overwrites a new file that took the name meanwhile', async () => {
    const f = drop('back.pdf', 'first');
    const r = await claimFile(f.path, processing, f);
    writeFileSync(f.path, 'second');
    expect(r.outcome === 'claimed' && (await releaseClaim(r.claimedPath, f.path))).toBe(false);
    expect(readFileSync(f.path, 'utf8')).toBe('second');
    expect(readdirSync(processing)).toEqual(['back.pdf']);
  });
});

describe('recoverProcessing', () => {
  it('returns nothing when there is no .processing folder', async () => {
    expect(await recoverProcessing(dir)).toEqual([]);
  });

  it('lists files left in flight, with their markers attached and not listed on their own', async () => {
    await fs.mkdir(processing);
    writeFileSync(path.join(processing, 'b.pdf'), 'bb');
    writeFileSync(path.join(processing, 'a.pdf'), 'a');
    writeFileSync(path.join(processing, 'a.pdf.done'), '');
    await fs.mkdir(path.join(processing, 'sub'));
    const found = await recoverProcessing(dir, { markerSuffixes: ['.done'] });
    expect(found.map((f) => [f.name, f.size, f.markerPath])).toEqual([
      ['a.pdf', 1, path.join(processing, 'a.pdf.done')],
      ['b.pdf', 2, undefined],
    ]);
  });
});
