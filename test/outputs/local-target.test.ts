import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutputTargetConfig } from '../../src/config/output-schema.js';
import { placeWriter, tempBaseName } from '../../src/core/temp-name.js';
import { LocalTarget, SHARED_TEMP_STALE_MS } from '../../src/outputs/local-target.js';
import { openOutputTarget } from '../../src/outputs/open-target.js';
import { caughtDocex } from '../api/support/caught.js';
import { captureLogger } from '../api/support/log-capture.js';
import { waitFor } from '../support/wait-for.js';

describe('LocalTarget', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'docex-target-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes text, bytes and streams under their names in new sub-folders, leaving no temp file', async () => {
    const target = new LocalTarget(root);
    await target.write('a/b/text.json', '{"ok":true}');
    await target.write('a/bytes.bin', Buffer.from([1, 2, 3]));
    await target.write('a/b/c/stream.xml', () => Readable.from(['<a>', '</a>']));
    expect(readFileSync(path.join(root, 'a/b/text.json'), 'utf8')).toBe('{"ok":true}');
    expect([...readFileSync(path.join(root, 'a/bytes.bin'))]).toEqual([1, 2, 3]);
    expect(readFileSync(path.join(root, 'a/b/c/stream.xml'), 'utf8')).toBe('<a></a>');
    expect(readdirSync(path.join(root, 'a/b')).sort()).toEqual(['c', 'text.json']);
    expect(await target.exists('a/bytes.bin')).toBe(true);
    expect(await target.exists('a/none')).toBe(false);
    expect(await target.sizeOf('a/bytes.bin')).toBe(3);
    expect(await target.sizeOf('a/none')).toBeUndefined();
    expect(await target.sizeOf('a/b')).toBeUndefined();
  });

  it('refuses a path that leaves its folder', async () => {
    const target = new LocalTarget(root);
    for (const bad of ['../escape.txt', '/etc/passwd', 'a/../../escape.txt', '']) {
      expect((await caughtDocex(target.write(bad, 'x'))).code).toBe('DOCEX_OUTPUT_PATH');
    }
  });

  it('reports a failed write as DOCEX_OUTPUT_WRITE and leaves nothing under the name', async () => {
    writeFileSync(path.join(root, 'file'), 'a file where a folder should be');
    const target = new LocalTarget(root);
    const err = await caughtDocex(target.write('file/inside.txt', 'x'));
    expect(err.code).toBe('DOCEX_OUTPUT_WRITE');
    const failing = await caughtDocex(
      target.write('broken.xml', () =>
        Readable.from(
          (async function* () {
            yield 'half';
            throw new Error('source broke');
          })(),
        ),
      ),
    );
    expect(failing.code).toBe('DOCEX_OUTPUT_WRITE');
    expect(readdirSync(root)).toEqual(['file']);
  });

  it('replaces the temp file a killed write of this writer left behind when the same output is written again', async () => {
    const target = new LocalTarget(root);
    await target.write('proofs/job_1/proof.pdf', 'first');
    // What a SIGKILL between the temp write and the rename leaves: a hidden half file.
    const dir = path.join(root, 'proofs/job_1');
    const temp = path.join(dir, tempBaseName(path.join(dir, 'again.pdf'), 'tmp', target.writer));
    writeFileSync(temp, 'half of a proof');
    await target.write('proofs/job_1/again.pdf', 'the whole proof');
    expect(readdirSync(dir).sort()).toEqual(['again.pdf', 'proof.pdf']);
    expect(readFileSync(path.join(dir, 'again.pdf'), 'utf8')).toBe('the whole proof');
  });

  it('writes one output twice at once without mixing the two (the writes share a temp name)', async () => {
    const target = new LocalTarget(root);
    const big = (c: string) => () => Readable.from(Array.from({ length: 64 }, () => c.repeat(4096)));
    await Promise.all([target.write('same.csv', big('a')), target.write('same.csv', big('b'))]);
    const text = readFileSync(path.join(root, 'same.csv'), 'utf8');
    expect(text).toBe('b'.repeat(64 * 4096));
    expect(readdirSync(root)).toEqual(['same.csv']);
  });

  it('writes one output from two processes at once (agents sharing the folder): each through its own temp file, the last rename whole', async () => {
    const a = new LocalTarget(root, { writer: 'aaaaaaaa' });
    const b = new LocalTarget(root, { writer: 'bbbbbbbb' });
    let aStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      aStarted = resolve;
    });
    let letAEnd: () => void = () => {};
    const aMayEnd = new Promise<void>((resolve) => {
      letAEnd = resolve;
    });
    const chunks = (c: string) => Array.from({ length: 16 }, () => c.repeat(4096));
    // A writes half of its file, B writes all of its own and renames it, then A ends and renames.
    const first = a.write('2026-11-27/doc.pdf.status.json', () =>
      Readable.from(
        (async function* () {
          for (const [i, chunk] of chunks('a').entries()) {
            if (i === 8) {
              aStarted();
              await aMayEnd;
            }
            yield chunk;
          }
        })(),
      ),
    );
    await started;
    await b.write('2026-11-27/doc.pdf.status.json', () => Readable.from(chunks('b')));
    expect(readFileSync(path.join(root, '2026-11-27/doc.pdf.status.json'), 'utf8')).toBe(
      'b'.repeat(16 * 4096),
    );
    letAEnd();
    await first;
    expect(readFileSync(path.join(root, '2026-11-27/doc.pdf.status.json'), 'utf8')).toBe(
      'a'.repeat(16 * 4096),
    );
    expect(readdirSync(path.join(root, '2026-11-27'))).toEqual(['doc.pdf.status.json']);
  });

  it('removes, before its first write, the temp files a killed process left under outputs not written again', async () => {
    // Left by an earlier process: a Peppol document at the root, a proof two folders down.
    const stale = [
      path.join(root, '.docex-0123456789ab.tmp'),
      path.join(root, '2026-11-26/job_1/.docex-ba9876543210-0badcafe.tmp'),
    ];
    mkdirSync(path.join(root, '2026-11-26/job_1'), { recursive: true });
    const before = new Date(performance.timeOrigin - 60_000);
    for (const file of stale) {
      writeFileSync(file, 'half');
      utimesSync(file, before, before);
    }
    writeFileSync(path.join(root, 'keep.tmp'), 'not ours');
    const target = new LocalTarget(root);
    await target.write('statuses.csv', 'a;b');
    for (const file of stale) expect(existsSync(file), file).toBe(false);
    expect(readdirSync(root).sort()).toEqual(['2026-11-26', 'keep.tmp', 'statuses.csv']);
  });
  it('on a shared folder, removes before its first write only its own and day-old temp files, never another agent’s write in flight', async () => {
    const a = new LocalTarget(root, { writer: 'aaaaaaaa', shared: true });
    const b = new LocalTarget(root, { writer: 'bbbbbbbb', shared: true });
    const status = '2026-11-27/doc.pdf.status.json';
    const tempOfA = path.join(root, '2026-11-27', tempBaseName(path.join(root, status), 'tmp', a.writer));
    let letAEnd: () => void = () => {};
    const aMayEnd = new Promise<void>((resolve) => {
      letAEnd = resolve;
    });
    const chunks = Array.from({ length: 16 }, () => 'a'.repeat(4096));
    // A writes half of a status file, then waits (its text read page by page from the journal).
    const first = a.write(status, () =>
      Readable.from(
        (async function* () {
          for (const [i, chunk] of chunks.entries()) {
            if (i === 8) await aMayEnd;
            yield chunk;
          }
        })(),
      ),
    );
    await waitFor(() => existsSync(tempOfA) && statSync(tempOfA).size === 8 * 4096);
    // Paused since before B's process started (or on a host whose clock is behind).
    const beforeStart = new Date(performance.timeOrigin - 60_000);
    utimesSync(tempOfA, beforeStart, beforeStart);
    // Left by killed processes: one of B's own writer, one of another writer a day and more ago.
    const ownLeftover = path.join(
      root,
      '2026-11-26',
      tempBaseName(path.join(root, '2026-11-26/x.pdf'), 'tmp', b.writer),
    );
    const oldLeftover = path.join(
      root,
      '2026-11-26',
      tempBaseName(path.join(root, '2026-11-26/y.pdf'), 'tmp', 'cccccccc'),
    );
    const dayOld = new Date(Date.now() - SHARED_TEMP_STALE_MS - 60_000);
    mkdirSync(path.join(root, '2026-11-26'));
    writeFileSync(ownLeftover, 'half');
    utimesSync(ownLeftover, beforeStart, beforeStart);
    writeFileSync(oldLeftover, 'half');
    utimesSync(oldLeftover, dayOld, dayOld);

    await b.write('statuses.csv', 'a;b');
    expect(existsSync(tempOfA)).toBe(true);
    expect(existsSync(ownLeftover)).toBe(false);
    expect(existsSync(oldLeftover)).toBe(false);
    letAEnd();
    await first;
    expect(readFileSync(path.join(root, status), 'utf8')).toBe('a'.repeat(16 * 4096));
    expect(readdirSync(path.join(root, '2026-11-27'))).toEqual(['doc.pdf.status.json']);
  });

  it('on a shared folder, a write of a target removes the temp file a dead agent’s cut write of that target left, and no other', async () => {
    const dead = 'dddddddd';
    const live = 'eeeeeeee';
    const b = new LocalTarget(root, { writer: 'bbbbbbbb', shared: true, deadWriters: async () => [dead] });
    const status = path.join(root, '2026-11-27', 'doc.pdf.status.json');
    const other = path.join(root, '2026-11-27', 'other.pdf.status.json');
    const tempOf = (target: string, writer: string) =>
      path.join(path.dirname(target), tempBaseName(target, 'tmp', writer));
    mkdirSync(path.dirname(status), { recursive: true });
    // Fresh: the shared sweep at the first write keeps them all (another agent's write may be in flight).
    for (const file of [tempOf(status, dead), tempOf(status, live), tempOf(other, dead)]) {
      writeFileSync(file, 'half');
    }
    await b.write('2026-11-27/doc.pdf.status.json', 'whole');
    expect(readFileSync(status, 'utf8')).toBe('whole');
    expect(existsSync(tempOf(status, dead))).toBe(false);
    expect(existsSync(tempOf(status, live))).toBe(true);
    // Its write of `other` is another agent's to do again, and that write removes it.
    expect(existsSync(tempOf(other, dead))).toBe(true);
  });

  it('on a shared folder, a write stands when the dead agents cannot be read (the journal down)', async () => {
    const logs = captureLogger();
    const b = new LocalTarget(root, {
      writer: 'bbbbbbbb',
      shared: true,
      log: logs.log,
      deadWriters: () => Promise.reject(new Error('journal down')),
    });
    await b.write('2026-11-27/doc.pdf.status.json', 'whole');
    expect(readFileSync(path.join(root, '2026-11-27', 'doc.pdf.status.json'), 'utf8')).toBe('whole');
    expect(logs.lines().map((l) => l['msg'])).toEqual(['dead agents’ temp files not removed']);
  });

  it('on a shared folder, an agent restarted on the same host and state folder removes the temp file its killed start left; another agent’s name differs', async () => {
    const stateDir = path.join(root, '..', 'state-of-this-agent');
    const writer = placeWriter(stateDir);
    expect(placeWriter(`${stateDir}/.`)).toBe(writer);
    expect(placeWriter(path.join(root, '..', 'state-of-another-agent'))).not.toBe(writer);
    // The start killed mid-write left its temp file of a status file.
    const status = path.join(root, '2026-11-27', 'doc.pdf.status.json');
    const leftover = path.join(root, '2026-11-27', tempBaseName(status, 'tmp', writer));
    mkdirSync(path.dirname(leftover), { recursive: true });
    writeFileSync(leftover, 'half');
    const beforeStart = new Date(performance.timeOrigin - 60_000);
    utimesSync(leftover, beforeStart, beforeStart);
    const target = openOutputTarget({ type: 'local', path: root } as OutputTargetConfig, {
      log: captureLogger().log,
      shared: { writer, deadWriters: async () => [] },
    });
    await target.write('statuses.csv', 'a;b');
    expect(existsSync(leftover)).toBe(false);
  });

  it('retention: removes files last written before the cutoff and the folders they leave empty, keeps the rest', async () => {
    const target = new LocalTarget(root);
    const now = Date.parse('2026-11-26T00:00:00Z');
    await target.write('2026-08-01/a.status.json', '{}');
    await target.write('2026-08-01/b/proof.pdf', 'old proof');
    await target.write('2026-11-20/c.status.json', '{}');
    const old = (now - 100 * 86_400_000) / 1000;
    for (const f of ['2026-08-01/a.status.json', '2026-08-01/b/proof.pdf'])
      utimesSync(path.join(root, f), old, old);
    expect(await target.removeOlderThan(now - 90 * 86_400_000)).toEqual({ files: 2, bytes: 11 });
    expect(readdirSync(root)).toEqual(['2026-11-20']);
    expect(await target.exists('2026-11-20/c.status.json')).toBe(true);
  });

  it('retention: an output folder not made yet holds nothing to remove', async () => {
    const target = new LocalTarget(path.join(root, 'never-written'));
    expect(await target.removeOlderThan(Date.now())).toEqual({ files: 0, bytes: 0 });
  });

  it('makes a missing output folder with one line naming it and every folder made above it; date folders inside without one', async () => {
    const logs = captureLogger();
    const statuses = path.join(root, 'out', 'statuses');
    mkdirSync(path.join(root, 'out'));
    const target = new LocalTarget(statuses, { log: logs.log, at: 'returns.statusFiles.target' });
    await target.write('2026-11-26/a.status.json', '{}');
    await target.write('2026-11-27/b.status.json', '{}');
    expect(logs.lines().map((l) => [l['level'], l['msg'], l['output'], l['created']])).toEqual([
      ['info', 'output folder created', 'returns.statusFiles.target', [statuses]],
    ]);

    const typo = captureLogger();
    const mistyped = path.join(root, 'no-such-parent', 'proofs');
    await new LocalTarget(mistyped, { log: typo.log, at: 'returns.proofs.target' }).write('p.pdf', 'x');
    expect(typo.lines()).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'output folder created',
        output: 'returns.proofs.target',
        path: mistyped,
        created: [path.join(root, 'no-such-parent'), mistyped],
      }),
    ]);
  });
});
