/**
 * Output folders on an SFTP server (real sshd): atomic placement, staging, a server that refuses
 * rename, and the factory that picks local or SFTP from the configuration.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { outputTargetSchema } from '../../src/config/output-schema.js';
import { silentLogger } from '../../src/core/logger.js';
import { tempBaseName } from '../../src/core/temp-name.js';
import { LocalTarget } from '../../src/outputs/local-target.js';
import { openOutputTarget } from '../../src/outputs/open-target.js';
import { remoteInside, SftpTarget } from '../../src/outputs/sftp-target.js';
import type { OutputTarget } from '../../src/outputs/types.js';
import { openSftpServer } from '../../src/sftp/server.js';
import { caughtDocex } from '../api/support/caught.js';
import { captureLogger } from '../api/support/log-capture.js';
import { sshdEndpoint } from '../sources/sftp/support/endpoint.js';
import { sampleWhile } from '../sources/sftp/support/sample-while.js';
import { describeSshd, startSshd, type TestSshd } from '../sources/sftp/support/sshd.js';

describe('remoteInside', () => {
  it('joins a relative path under the root and refuses paths that leave it', () => {
    expect(remoteInside('/out', '2026-11-21/proof.pdf')).toBe('/out/2026-11-21/proof.pdf');
    for (const bad of ['', '/etc/passwd', '../x', 'a/../../x', '.']) {
      expect(() => remoteInside('/out', bad)).toThrow(/leaves its folder/);
    }
  });
});

describeSshd('SftpTarget (real sshd)', () => {
  let sshd: TestSshd;
  let refusing: TestSshd;
  const targets: OutputTarget[] = [];
  let n = 0;

  beforeAll(async () => {
    [sshd, refusing] = await Promise.all([
      startSshd(),
      startSshd({ sftpArgs: ['-P', 'rename,posix-rename'] }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sshd?.stop(), refusing?.stop()]);
  });
  afterEach(async () => {
    await Promise.all(targets.splice(0).map((t) => t.close()));
  });

  function target(server: TestSshd, root: string, staging?: string, log = silentLogger()): SftpTarget {
    const t = new SftpTarget(openSftpServer(sshdEndpoint(server), { log }), { root, staging, log });
    targets.push(t);
    return t;
  }

  it('writes into new sub-folders, replaces an existing file, and exists() and sizeOf() see it', async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const t = target(sshd, root);
    expect(t.description).toBe(`sftp://${sshd.username}@127.0.0.1:${sshd.port}${root}`);
    expect(await t.exists('2026-11-21/a.csv')).toBe(false);
    await t.write('2026-11-21/a.csv', 'one');
    await t.write('2026-11-21/a.csv', () => Readable.from(['two']));
    expect(readFileSync(path.join(root, '2026-11-21', 'a.csv'), 'utf8')).toBe('two');
    expect(readdirSync(path.join(root, '2026-11-21'))).toEqual(['a.csv']);
    expect(await t.exists('2026-11-21/a.csv')).toBe(true);
    expect(await t.sizeOf('2026-11-21/a.csv')).toBe(3);
    expect(await t.sizeOf('2026-11-21/none.csv')).toBeUndefined();
  });

  it('retention: removes the files last written before the cutoff at any depth, keeps the rest; a missing folder holds none', async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const t = target(sshd, root);
    expect(await t.removeOlderThan(Date.now())).toEqual({ files: 0, bytes: 0 });
    await t.write('2026-08-01/a.status.json', 'aa');
    await t.write('2026-08-01/b/proof.pdf', 'bbb');
    await t.write('2026-11-20/c.status.json', 'c');
    const now = Date.now();
    const old = (now - 100 * 86_400_000) / 1000;
    for (const f of ['2026-08-01/a.status.json', '2026-08-01/b/proof.pdf'])
      utimesSync(path.join(root, f), old, old);
    expect(await t.removeOlderThan(now - 90 * 86_400_000)).toEqual({ files: 2, bytes: 5 });
    expect(existsSync(path.join(root, '2026-08-01', 'a.status.json'))).toBe(false);
    expect(existsSync(path.join(root, '2026-08-01', 'b', 'proof.pdf'))).toBe(false);
    expect(readFileSync(path.join(root, '2026-11-20', 'c.status.json'), 'utf8')).toBe('c');
  });

  it('refuses a path that leaves its folder with DOCEX_OUTPUT_PATH', async () => {
    const t = target(sshd, path.join(sshd.files, `out${++n}`));
    expect((await caughtDocex(t.write('../escape.txt', 'x'))).code).toBe('DOCEX_OUTPUT_PATH');
  });

  it("replaces a crash's leftover temp file at the next write of its target when no other agent writes the folder", async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const t = target(sshd, root);
    const remote = path.join(root, '2026-11-27', 'doc.pdf.status.json');
    mkdirSync(path.dirname(remote), { recursive: true });
    // What a write killed mid-upload leaves: its temp file, half written.
    writeFileSync(path.join(path.dirname(remote), tempBaseName(remote)), 'half');
    await t.write('2026-11-27/doc.pdf.status.json', 'whole');
    expect(readdirSync(path.dirname(remote))).toEqual(['doc.pdf.status.json']);
    expect(readFileSync(remote, 'utf8')).toBe('whole');
  });

  it('writes one output from two processes at once (agents sharing the folder): each through its own temp file, the last rename whole', async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const log = silentLogger();
    const server = () => openSftpServer(sshdEndpoint(sshd), { log });
    const a = new SftpTarget(server(), { root, log, writer: 'aaaaaaaa' });
    const b = new SftpTarget(server(), { root, log, writer: 'bbbbbbbb' });
    targets.push(a, b);
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
    letAEnd();
    await first;
    expect(readFileSync(path.join(root, '2026-11-27/doc.pdf.status.json'), 'utf8')).toBe(
      'a'.repeat(16 * 4096),
    );
    expect(readdirSync(path.join(root, '2026-11-27'))).toEqual(['doc.pdf.status.json']);
  });

  it('a write of a target removes the temp file a dead agent’s cut write of that target left, and another live agent’s stays', async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const log = silentLogger();
    const t = new SftpTarget(openSftpServer(sshdEndpoint(sshd), { log }), {
      root,
      log,
      writer: 'bbbbbbbb',
      deadWriters: async () => ['dddddddd'],
    });
    targets.push(t);
    const remote = path.join(root, '2026-11-27', 'doc.pdf.status.json');
    const tempOf = (writer: string) => path.join(path.dirname(remote), tempBaseName(remote, 'tmp', writer));
    mkdirSync(path.dirname(remote), { recursive: true });
    writeFileSync(tempOf('dddddddd'), 'half');
    writeFileSync(tempOf('eeeeeeee'), 'half');
    await t.write('2026-11-27/doc.pdf.status.json', 'whole');
    expect(readFileSync(remote, 'utf8')).toBe('whole');
    expect(readdirSync(path.dirname(remote)).sort()).toEqual(
      ['doc.pdf.status.json', path.basename(tempOf('eeeeeeee'))].sort(),
    );
  });

  it('with a staging folder, temporary files never appear in the ERP folder', async () => {
    const root = path.join(sshd.files, `out${++n}`);
    const staging = path.join(sshd.files, `staging${n}`);
    const t = target(sshd, root, staging);
    mkdirSync(root);
    const seen = new Set<string>();
    await sampleWhile(
      () => {
        for (const f of readdirSync(root, { recursive: true })) seen.add(String(f));
      },
      () => t.write('x.xml', Buffer.alloc(2 * 1024 * 1024, 1)),
    );
    expect([...seen]).toEqual(['x.xml']);
    expect(readdirSync(root)).toEqual(['x.xml']);
    expect(readdirSync(staging)).toEqual([]);
  });

  it('a server that refuses rename, without staging: DOCEX_OUTPUT_WRITE (cause DOCEX_SFTP_RENAME_REFUSED), no file placed', async () => {
    const root = path.join(refusing.files, `out${++n}`);
    const t = target(refusing, root);
    const err = await caughtDocex(t.write('a.csv', 'data'));
    expect(err.code).toBe('DOCEX_OUTPUT_WRITE');
    expect(err.details).toMatchObject({ code: 'DOCEX_SFTP_RENAME_REFUSED' });
    expect(readdirSync(root)).toEqual([]);
  });

  it('a server that refuses rename, with staging: files land in staging under their final names, one warning', async () => {
    const root = path.join(refusing.files, `out${++n}`);
    const staging = path.join(refusing.files, `staging${n}`);
    const capture = captureLogger();
    const t = target(refusing, root, staging, capture.log);
    await t.write('d/a.csv', 'A');
    await t.write('d/b.csv', 'B');
    expect(readFileSync(path.join(staging, 'd', 'a.csv'), 'utf8')).toBe('A');
    expect(readFileSync(path.join(staging, 'd', 'b.csv'), 'utf8')).toBe('B');
    expect(readdirSync(path.join(root, 'd'))).toEqual([]);
    const warnings = capture.lines().filter((l) => String(l.msg).startsWith('sftp server refuses rename'));
    expect(warnings).toHaveLength(1);
    expect(await t.exists('d/a.csv')).toBe(true);
    expect(await t.exists('d/c.csv')).toBe(false);
    expect(await t.sizeOf('d/a.csv')).toBe(1);
    expect(await t.sizeOf('d/c.csv')).toBeUndefined();
  });

  describe('openOutputTarget', () => {
    let keyDir: string;
    beforeAll(() => {
      keyDir = mkdtempSync(path.join(os.tmpdir(), 'docex-target-key-'));
    });
    afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

    function sftpConfig(keyFile: string, root: string) {
      return outputTargetSchema.parse({
        type: 'sftp',
        host: '127.0.0.1',
        port: sshd.port,
        username: sshd.username,
        privateKeyFile: keyFile,
        hostKey: { knownHostsFile: sshd.knownHostsFile },
        path: root,
      });
    }

    it('opens a local folder for type local', () => {
      const t = openOutputTarget(outputTargetSchema.parse({ type: 'local', path: keyDir }), {
        log: silentLogger(),
      });
      expect(t).toBeInstanceOf(LocalTarget);
    });

    it('opens an SFTP folder from its configuration and writes through it', async () => {
      const keyFile = path.join(keyDir, 'key');
      writeFileSync(keyFile, sshd.privateKey, { mode: 0o600 });
      const root = path.join(sshd.files, `out${++n}`);
      const t = openOutputTarget(sftpConfig(keyFile, root), { log: silentLogger() });
      targets.push(t);
      await t.write('proof.pdf', 'PDF');
      expect(readFileSync(path.join(root, 'proof.pdf'), 'utf8')).toBe('PDF');
    });

    it('refuses a private key file readable by others when the target is opened', () => {
      const keyFile = path.join(keyDir, 'loose');
      writeFileSync(keyFile, sshd.privateKey);
      chmodSync(keyFile, 0o644);
      mkdirSync(path.join(keyDir, 'x'), { recursive: true });
      expect(() =>
        openOutputTarget(sftpConfig(keyFile, '/tmp'), { log: silentLogger(), at: 'returns.proofs.target' }),
      ).toThrow(/returns\.proofs\.target\.privateKeyFile: secret file .* is readable by group or others/);
      expect(existsSync(keyFile)).toBe(true);
    });
  });
});
