import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureFolderDirs } from '../../src/agent/folders.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { GUIDE_MODES, makeSharedDir, sharedDirMode } from '../../src/core/shared-dir.js';
import { LocalTarget } from '../../src/outputs/local-target.js';

const mode = (p: string) => statSync(p).mode & 0o7777;
const asRoot = process.getuid?.() === 0;
// The ERP's group: one this process is not in, when it may hand a folder over (root, as in CI).
const ERP_GID = asRoot ? 4242 : process.getgid!();

let dir: string;
let umask: number;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-shared-dir-'));
  // A by-hand start (umask 0022) must give the same modes as the unit's UMask=0007.
  umask = process.umask(0o022);
});
afterEach(() => {
  process.umask(umask);
  rmSync(dir, { recursive: true, force: true });
});

/** The 2770 drop root of systemd/README.md, in the ERP's group when this process may hand it over. */
function dropRoot(): string {
  const root = path.join(dir, 'srv');
  mkdirSync(root);
  chownSync(root, -1, ERP_GID);
  chmodSync(root, 0o2770);
  return root;
}

describe('folders the agent makes', () => {
  it('take the setgid bit and group access of their parent, nothing for others', () => {
    expect(sharedDirMode(0o2770)).toBe(0o2770);
    expect(sharedDirMode(0o2750)).toBe(0o2750);
    expect(sharedDirMode(0o0755)).toBe(0o0750);
    expect(sharedDirMode(0o0700)).toBe(0o0700);
    expect(sharedDirMode(0o1777)).toBe(0o0770);
  });

  it('are 2770 in the group of a 2770 parent at every level made, whatever the umask', async () => {
    const root = dropRoot();
    await makeSharedDir(path.join(root, 'invoices', '.archive', '2026-11-26'));
    for (const made of ['invoices', 'invoices/.archive', 'invoices/.archive/2026-11-26']) {
      expect(mode(path.join(root, made)).toString(8), made).toBe('2770');
      expect(statSync(path.join(root, made)).gid, made).toBe(statSync(root).gid);
    }
  });

  it('are 2770 when many are made at once, nested in folders made by the same burst', async () => {
    const root = dropRoot();
    const leaves = Array.from({ length: 24 }, (_, i) =>
      path.join(root, 'out', 'proofs', `day-${i % 3}`, `file-${i}`),
    );
    await Promise.all(leaves.map((leaf) => makeSharedDir(leaf)));
    const made = leaves.flatMap((leaf) => [leaf, path.dirname(leaf)]);
    made.push(path.join(root, 'out'), path.join(root, 'out', 'proofs'));
    expect([...new Set(made)].filter((p) => mode(p) !== 0o2770)).toEqual([]);
  });

  it('keep a private parent private and leave a folder that exists as it is', async () => {
    const state = path.join(dir, 'state');
    mkdirSync(state, { mode: 0o700 });
    await makeSharedDir(path.join(state, 'out', 'proofs'));
    expect(mode(path.join(state, 'out', 'proofs')).toString(8)).toBe('700');
    chmodSync(path.join(state, 'out'), 0o750);
    await makeSharedDir(path.join(state, 'out'));
    expect(mode(path.join(state, 'out')).toString(8)).toBe('750');
  });

  it('take the group of a parent without setgid too', async () => {
    const root = path.join(dir, 'plain');
    mkdirSync(root);
    chownSync(root, -1, ERP_GID);
    chmodSync(root, 0o0770);
    await makeSharedDir(path.join(root, 'a'));
    expect(statSync(path.join(root, 'a')).gid).toBe(ERP_GID);
    expect(mode(path.join(root, 'a')).toString(8)).toBe('770');
  });

  it("are a drop folder's source (create: true), archive and error folders made at start, and an output target's day folders", async () => {
    const root = dropRoot();
    const config = agentConfigSchema.parse({
      sandbox: { enabled: true },
      folders: [
        {
          name: 'invoices',
          source: { type: 'local', path: path.join(root, 'invoices') },
          workflowId: 'wf',
          create: true,
        },
      ],
    });
    await ensureFolderDirs(config.folders[0]!, { at: 'folders[0]' });
    for (const made of ['invoices', 'invoices/.archive', 'invoices/.error']) {
      expect(mode(path.join(root, made)).toString(8), made).toBe('2770');
    }
    await new LocalTarget(path.join(root, 'out', 'statuses')).write('2026-11-26/a.pdf.status.json', '{}');
    for (const made of ['out', 'out/statuses', 'out/statuses/2026-11-26']) {
      expect(mode(path.join(root, made)).toString(8), made).toBe('2770');
    }
  });
});

describe('the modes check and the error hints suggest', () => {
  const unit = readFileSync('systemd/docex-agent.service', 'utf8');
  const guide = readFileSync('systemd/README.md', 'utf8');
  /** The owner-and-mode cell of a row of the guide's table of paths. */
  const tableMode = (row: string) =>
    new RegExp(`^\\| \`${row}\` \\|[^|]*\\| [^|]*?(\\d{4}) \\|$`, 'm').exec(guide)?.[1];

  it("are the unit's StateDirectoryMode= and the guide's 0700 for the state folder", () => {
    expect(/^StateDirectoryMode=(\d+)$/m.exec(unit)?.[1]).toBe(GUIDE_MODES.state);
    expect(tableMode('/var/lib/docex-agent')).toBe(GUIDE_MODES.state);
  });

  it("are the guide's 2770 for /srv/docex and every folder the guide and docs/ make for docex-agent under it", () => {
    expect(tableMode('/srv/docex')).toBe(GUIDE_MODES.shared);
    const pages = [
      guide,
      ...readdirSync('docs')
        .filter((f) => f.endsWith('.md'))
        .map((f) => readFileSync(`docs/${f}`, 'utf8')),
    ];
    // `install -d -o docex-agent -g docex-agent -m MODE PATH`, possibly broken over two lines.
    const made = pages.flatMap((page) => [
      ...page.matchAll(/install -d -o docex-agent -g\s+docex-agent -m (\d+) (\S+)/g),
    ]);
    const shared = made.filter((m) => m[2]!.startsWith('/srv/docex'));
    expect(shared.map((m) => m[2])).toContain('/srv/docex/invoices');
    expect(shared.map((m) => `${m[2]} ${m[1]}`)).toEqual(shared.map((m) => `${m[2]} ${GUIDE_MODES.shared}`));
  });
});
