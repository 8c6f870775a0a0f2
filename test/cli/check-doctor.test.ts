// biome-ignore-all lint/suspicious/noTemplateCurlyInString: configs hold ${file:} references literally
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ensureFolderDirs } from '../../src/agent/folders.js';
import { DISK_FAIL_BYTES, diskLine, keyFileLine, ROOT_NOTICE } from '../../src/cli/check-files.js';
import { type CheckLine, formatCheck } from '../../src/cli/check-line.js';
import { runChecks } from '../../src/cli/check-runner.js';
import { loadConfig } from '../../src/config/index.js';
import { ensurePki } from '../../src/sandbox/pki.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { startTestSandbox, type TestSandbox } from '../sandbox/sandbox-harness.js';

let sandbox: TestSandbox;
let dir: string;
let service: Record<string, unknown> & { tls: Record<string, string> };

beforeAll(async () => {
  sandbox = await startTestSandbox();
  dir = sandbox.stateDir;
  service = (
    parse(readFileSync(sandbox.sandbox.paths.agentConfigFragment, 'utf8')) as { service: typeof service }
  ).service;
});
afterAll(async () => {
  await sandbox.stop();
});

let n = 0;
/**
 * A config with the sandbox's service block (changed by `edit`) and the given folders, whose drop
 * folders the operator made (unless `missing`).
 */
function config(
  folders: Array<{
    name: string;
    workflowId: string;
    mode?: string;
    routes?: Array<{ match: string; workflowId?: string; managedCompanyId?: string; mode?: string }>;
    companies?: Record<string, string | { managedCompanyId: string; workflowId: string }>;
    missing?: boolean;
    create?: boolean;
  }> = [],
  edit: (s: typeof service) => typeof service = (s) => s,
) {
  const name = `doctor-${++n}`;
  const file = path.join(dir, `${name}.yaml`);
  for (const f of folders) if (!f.missing) mkdirSync(path.join(dir, name, 'in', f.name), { recursive: true });
  writeFileSync(
    file,
    stringify({
      service: edit(structuredClone(service)),
      stateDir: `./${name}/state`,
      folders: folders.map(({ missing: _, ...f }) => ({
        ...f,
        source: { type: 'local', path: `./${name}/in/${f.name}` },
      })),
    }),
  );
  return loadConfig(file).config;
}

const by = (lines: CheckLine[], what: string) => lines.find((l) => l.what === what);
const fast = { handshake: { timeoutMs: 5000 } };

describe('docex-agent check (the doctor)', () => {
  it('passes every check on a good configuration, one line each, in the order they are best fixed', async () => {
    const lines = await runChecks(config([{ name: 'good', workflowId: SEED.workflows.pdfEmail }]), {
      ...fast,
      asRoot: false,
    });
    expect(lines.filter((l) => !l.ok || l.warn)).toEqual([]);
    expect(lines.map((l) => l.what)).toEqual([
      'state folder',
      'key file permissions',
      'private key',
      'key and certificate',
      'certificate chain',
      'certificate expiry',
      'tls handshake',
      'token',
      'api key',
      'folder good',
      'folder good source',
      'folder good archive',
      'folder good error',
      'output statuses',
      'output proofs',
      'output peppol inbox',
      expect.stringMatching(/^free disk /),
    ]);
    expect(by(lines, 'tls handshake')?.detail).toMatch(/TLSv1\.[23], server certificate trusted/);
    expect(by(lines, 'folder good')?.detail).toBe(
      'workflow wf_pdf_email exists, enabled, validated; input PDF fits mode single-file',
    );
  });

  it("checks the workflow of every route of a folder, as the route's company, and fails the folder naming a route's unknown or misfit workflow", async () => {
    const routes = [
      {
        match: '*-managed.pdf',
        workflowId: SEED.workflows.managedPdfEmail,
        managedCompanyId: SEED.managedCompanyId,
      },
      { match: '*-print.pdf', workflowId: SEED.workflows.pdfPrint },
    ];
    const good = await runChecks(config([{ name: 'routed', workflowId: SEED.workflows.pdfEmail, routes }]), {
      ...fast,
      asRoot: false,
    });
    expect(by(good, 'folder routed')).toMatchObject({
      ok: true,
      detail:
        'workflow wf_pdf_email exists, enabled, validated; input PDF fits mode single-file; the workflow of each of its 2 routes (wf_managed_pdf_email, wf_pdf_print) too',
    });
    const modes = await runChecks(
      config([
        {
          name: 'modes',
          workflowId: SEED.workflows.pdfEmail,
          routes: [
            { match: '*.csv', workflowId: SEED.workflows.payloadWordEmail, mode: 'payload-word' },
            { match: '*.pdf', workflowId: SEED.workflows.pdfPrint },
          ],
        },
      ]),
      { ...fast, asRoot: false },
    );
    expect(by(modes, 'folder modes')).toMatchObject({
      ok: true,
      detail:
        'workflow wf_pdf_email exists, enabled, validated; input PDF fits mode single-file; the workflow of each of its 2 routes (wf_payload_word_email as payload-word, wf_pdf_print) too',
    });
    const bad = await runChecks(
      config([
        {
          name: 'unknown',
          workflowId: SEED.workflows.pdfEmail,
          routes: [...routes, { match: '*.pdf', workflowId: 'wf_nowhere' }],
        },
        {
          name: 'misfit',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '*.csv', workflowId: SEED.workflows.payloadWordEmail }],
        },
      ]),
      { ...fast, asRoot: false },
    );
    expect(by(bad, 'folder unknown')).toMatchObject({
      ok: false,
      detail: 'DOCEX_FOLDER_WORKFLOW: route to workflow wf_nowhere does not exist',
    });
    expect(by(bad, 'folder misfit')?.ok).toBe(false);
    expect(by(bad, 'folder misfit')?.detail).toContain(
      `route to folder misfit: mode single-file does not fit workflow ${SEED.workflows.payloadWordEmail}`,
    );
  });

  it('names each company of a {company} route with its own workflow, and fails the folder naming the entry whose workflow the company may not use', async () => {
    const companies = {
      acme: SEED.managedCompanyId,
      globex: {
        managedCompanyId: SEED.secondManagedCompanyId,
        workflowId: SEED.workflows.secondManagedPdfEmail,
      },
    };
    const lines = await runChecks(
      config([
        {
          name: 'by-company',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '{company}-*.pdf', workflowId: SEED.workflows.managedPdfEmail }],
          companies,
        },
        {
          name: 'print-too',
          workflowId: SEED.workflows.pdfEmail,
          routes: [
            { match: '*-credit.pdf', workflowId: SEED.workflows.pdfPrint },
            { match: '{company}-*.pdf' },
          ],
          companies: {
            acme: { managedCompanyId: SEED.managedCompanyId, workflowId: SEED.workflows.managedPdfEmail },
            globex: companies.globex,
          },
        },
        {
          name: 'wrong-workflow',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '{company}-*.pdf', workflowId: SEED.workflows.managedPdfEmail }],
          companies: { acme: SEED.managedCompanyId, globex: SEED.secondManagedCompanyId },
        },
      ]),
      { ...fast, asRoot: false },
    );
    expect(by(lines, 'folder by-company')).toMatchObject({
      ok: true,
      detail:
        'workflow wf_pdf_email exists, enabled, validated; input PDF fits mode single-file; the workflows of its route (wf_managed_pdf_email for acme, wf_managed_2_pdf_email for globex) too',
    });
    expect(by(lines, 'folder print-too')).toMatchObject({
      ok: true,
      detail:
        'workflow wf_pdf_email exists, enabled, validated; input PDF fits mode single-file; the workflow of each of its 2 routes (wf_pdf_print, wf_managed_pdf_email for acme, wf_managed_2_pdf_email for globex) too',
    });
    expect(by(lines, 'folder wrong-workflow')).toMatchObject({
      ok: false,
      detail: `DOCEX_FOLDER_WORKFLOW: companies.globex: route to workflow ${SEED.workflows.managedPdfEmail} was refused as managed company ${SEED.secondManagedCompanyId} (403): the credentials may not act for that company, or the workflow is not its to use`,
    });
  });

  it("fails a folder whose route or companies table names a company the credentials cannot act for, naming the company and the table's entry", async () => {
    const lines = await runChecks(
      config([
        {
          name: 'companies',
          workflowId: SEED.workflows.pdfEmail,
          routes: [{ match: '{company}-*.pdf', workflowId: SEED.workflows.managedPdfEmail }],
          companies: { managed: SEED.managedCompanyId, other: SEED.otherCompanyId },
        },
        {
          name: 'route-company',
          workflowId: SEED.workflows.pdfEmail,
          routes: [
            {
              match: '*.pdf',
              workflowId: SEED.workflows.managedPdfEmail,
              managedCompanyId: SEED.otherCompanyId,
            },
          ],
        },
      ]),
      { ...fast, asRoot: false },
    );
    expect(by(lines, 'folder companies')).toMatchObject({ ok: false });
    expect(by(lines, 'folder companies')?.detail).toBe(
      `DOCEX_FOLDER_WORKFLOW: companies.other: route to workflow ${SEED.workflows.managedPdfEmail} was refused as managed company ${SEED.otherCompanyId} (403): the credentials may not act for that company, or the workflow is not its to use`,
    );
    expect(by(lines, 'folder route-company')?.detail).toBe(
      `DOCEX_FOLDER_WORKFLOW: route to workflow ${SEED.workflows.managedPdfEmail} was refused as managed company ${SEED.otherCompanyId} (403): the credentials may not act for that company, or the workflow is not its to use`,
    );
  });

  it('fails an output folder the agent cannot write, naming it and the error', async () => {
    const blocker = path.join(dir, 'a-file-not-a-folder');
    writeFileSync(blocker, '');
    const file = path.join(dir, 'unwritable-output.yaml');
    writeFileSync(
      file,
      stringify({
        service,
        stateDir: './unwritable-output/state',
        returns: { proofs: { target: { type: 'local', path: `${blocker}/proofs` } } },
      }),
    );
    const lines = await runChecks(loadConfig(file).config, { ...fast, asRoot: false });
    expect(by(lines, 'output proofs')).toMatchObject({
      ok: false,
      detail: `${blocker}/proofs is not writable (ENOTDIR)`,
    });
    expect(by(lines, 'output statuses')?.ok).toBe(true);
  });

  it('as root, says once that folder access is not tested and why, makes no folder, and each folder line only says what is there', async () => {
    const cfg = config([
      { name: 'rooted', workflowId: SEED.workflows.pdfEmail, missing: true, create: true },
      { name: 'present', workflowId: SEED.workflows.pdfEmail },
    ]);
    const lines = await runChecks(cfg, { ...fast, asRoot: true });
    const drop = (i: number) => {
      const source = cfg.folders[i]!.source;
      return source.type === 'local' ? source.path : '';
    };
    for (const made of [cfg.stateDir, drop(0)]) expect(existsSync(made), made).toBe(false);
    expect(lines[0]).toEqual(ROOT_NOTICE);
    expect(formatCheck(lines[0]!, { plain: true })).toBe(
      "WARN folder access: not tested: check runs as root, and root may read and write any folder, so a pass would prove nothing of the agent's user; folders are only looked at, none is made\n    fix: run check as the agent's user to test its access (systemd/README.md, step 6: systemd-run -p User=docex-agent …, or sudo -u docex-agent)\n",
    );
    // The one warning about access: every folder line passes, without its own.
    const folderLines = lines.filter((l) => /^(state folder|folder \S+ \S+|output )/.test(l.what));
    expect(folderLines.length).toBe(10);
    expect(folderLines.filter((l) => !l.ok || l.warn)).toEqual([]);
    expect(lines.filter((l) => l.detail.includes('not tested'))).toEqual([ROOT_NOTICE]);
    expect(by(lines, 'state folder')?.detail).toBe(
      `${cfg.stateDir} does not exist yet; the agent makes it at start (systemd makes it first: StateDirectory=)`,
    );
    expect(by(lines, 'folder rooted source')?.detail).toBe(
      `${drop(0)} does not exist yet; the agent makes it at start (folders[0].create: true)`,
    );
    expect(by(lines, 'folder present source')?.detail).toMatch(
      // Named as the unreadable files are: `root (uid 0)`, or the number alone.
      new RegExp(
        `^${drop(1)} exists \\(owner (\\S+ \\()?uid \\d+\\)?, group (\\S+ \\()?gid \\d+\\)?, mode \\d{4}\\)$`,
      ),
    );
    expect(by(lines, 'key file permissions')?.ok).toBe(true);
  });

  it('suggests the modes of the guide and the unit: 0700 for the state folder and what lies in it, 2770 for the drop, archive, error and output folders shared with the ERP; makes the state folder 0700 as the agent does', async () => {
    const shared = path.join(dir, 'modes-shared');
    const file = path.join(dir, 'modes.yaml');
    mkdirSync(path.join(dir, 'modes-in', 'invoices'), { recursive: true });
    // Under a 2770 folder, as /srv/docex: the state folder made there is still the agent's alone.
    mkdirSync(shared);
    chmodSync(shared, 0o2770);
    writeFileSync(
      file,
      stringify({
        service,
        stateDir: `${shared}/state`,
        folders: [
          {
            name: 'invoices',
            workflowId: SEED.workflows.pdfEmail,
            source: { type: 'local', path: './modes-in/invoices' },
            archiveDir: `${shared}/archive`,
          },
        ],
        returns: { proofs: { target: { type: 'local', path: `${shared}/proofs` } } },
      }),
    );
    // As the agent's user: each folder line carries the fix (shown when it fails). As root, only a
    // missing drop folder has one, tested above.
    const lines = await runChecks(loadConfig(file).config, { ...fast, asRoot: false });
    const mode = (what: string) =>
      by(lines, what)?.hint?.match(/install -d -o docex-agent -g docex-agent -m (\d{4}) /)?.[1];
    expect(mode('state folder')).toBe('0700');
    // The statuses output defaults to <stateDir>/out/statuses: the agent's alone, as its state.
    expect(mode('output statuses')).toBe('0700');
    expect(mode('folder invoices source')).toBe('2770');
    expect(mode('folder invoices archive')).toBe('2770');
    expect(mode('folder invoices error')).toBe('2770');
    expect(mode('output proofs')).toBe('2770');
    // (A setgid parent's bit is inherited by mkdir; no access for the group or others.)
    expect((statSync(`${shared}/state`).mode & 0o777).toString(8)).toBe('700');
  });

  it('fails a missing drop folder with "does not exist", its key and the command that makes it as the guide does, and makes nothing (as the agent user and as root)', async () => {
    for (const asRoot of [false, true]) {
      const cfg = config([
        { name: 'present', workflowId: SEED.workflows.pdfEmail },
        { name: 'typo', workflowId: SEED.workflows.pdfEmail, missing: true },
      ]);
      const drop = cfg.folders[1]!.source.type === 'local' ? cfg.folders[1]!.source.path : '';
      const lines = await runChecks(cfg, { ...fast, asRoot });
      expect(existsSync(drop), `${drop} made (asRoot ${asRoot})`).toBe(false);
      expect(by(lines, 'folder typo source')).toEqual({
        ok: false,
        what: 'folder typo source',
        detail: `${drop} does not exist (folders[1].source.path); the agent makes no drop folder unless the folder says create: true`,
        hint: `create it for the agent's user and the ERP's group (systemd/README.md, step 5): install -d -o docex-agent -g docex-agent -m 2770 ${drop}; or correct folders[1].source.path; or set folders[1].create: true`,
      });
      // Its archive and error folders lie in it: made with it, not reported on their own.
      expect(by(lines, 'folder typo archive')).toBeUndefined();
      expect(by(lines, 'folder typo error')).toBeUndefined();
      expect(by(lines, 'folder present source')?.ok).toBe(true);
    }
  });

  it('fails a drop folder behind a plain file as start stops its folder: the same words and fix (as the agent user and as root)', async () => {
    const cfg = config([{ name: 'behind', workflowId: SEED.workflows.pdfEmail, missing: true }]);
    const folder = cfg.folders[0]!;
    const drop = folder.source.type === 'local' ? folder.source.path : '';
    mkdirSync(path.dirname(path.dirname(drop)), { recursive: true });
    writeFileSync(path.dirname(drop), 'a file where a folder on the path should be');
    const started = await ensureFolderDirs(folder, { at: 'folders[0]' }).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    for (const asRoot of [false, true]) {
      const line = by(await runChecks(cfg, { ...fast, asRoot }), 'folder behind source');
      expect(line).toEqual({
        ok: false,
        what: 'folder behind source',
        detail: `${drop} (folders[0].source.path) cannot be reached (ENOTDIR)`,
        hint: 'put a folder there (a file stands on its path) or correct folders[0].source.path, then reload',
      });
      expect(started?.message).toBe(`folder behind: drop folder ${line?.detail}. Fix: ${line?.hint}`);
    }
  });

  it('makes a missing drop folder as the agent would when the folder says create: true (as the agent user)', async () => {
    const cfg = config([{ name: 'made', workflowId: SEED.workflows.pdfEmail, missing: true, create: true }]);
    const lines = await runChecks(cfg, { ...fast, asRoot: false });
    expect(by(lines, 'folder made source')).toMatchObject({ ok: true });
    expect(by(lines, 'folder made source')?.warn).toBeFalsy();
  });

  it('fails on a private key readable by others, with the chmod that fixes it', async () => {
    const key = path.join(dir, 'open-client.key');
    copyFileSync(service.tls['keyFile']!, key);
    chmodSync(key, 0o644);
    const lines = await runChecks(
      config([], (s) => ({ ...s, tls: { ...s.tls, keyFile: key } })),
      fast,
    );
    const line = by(lines, 'key file permissions');
    expect(line?.ok).toBe(false);
    expect(line?.detail).toBe(`${key} is readable by group or others (mode 0644)`);
    expect(formatCheck(line!, { plain: true })).toBe(
      `FAIL key file permissions: ${line?.detail}\n    fix: chmod 600 ${key} (readable by its owner only: root under systemd/README.md, whose LoadCredential= hands the service a copy; else the agent's user)\n`,
    );
  });

  it("says a key in systemd's credentials folder is its copy, and how to check the source's mode", () => {
    const runCredentials = path.join(dir, 'run-credentials');
    const copies = path.join(runCredentials, 'docex-agent.service');
    mkdirSync(copies, { recursive: true });
    const key = path.join(copies, 'client.key');
    copyFileSync(service.tls['keyFile']!, key);
    chmodSync(key, 0o400);
    const line = keyFileLine(key, copies, `${runCredentials}/`);
    expect(line.ok).toBe(true);
    expect(line.detail).toBe(
      `${key} mode 0400, readable by its owner only; systemd's copy of a LoadCredential= source, whose mode this cannot see: run check as root with CREDENTIALS_DIRECTORY set to the source folder (systemd/README.md, step 6)`,
    );
    // The source folder itself, named by CREDENTIALS_DIRECTORY (check run as root): its own mode.
    expect(keyFileLine(key, copies, '/run/credentials/').detail).toBe(
      `${key} mode 0400, readable by its owner only`,
    );
  });

  it('fails the handshake with a caFile hint when the CA is not the one of the service', async () => {
    const other = ensurePki(path.join(dir, 'other-pki'));
    const lines = await runChecks(
      config([], (s) => ({ ...s, tls: { ...s.tls, caFile: other.paths.caCert } })),
      fast,
    );
    expect(by(lines, 'certificate chain')).toMatchObject({ ok: true, warn: true });
    const handshake = by(lines, 'tls handshake');
    expect(handshake?.ok).toBe(false);
    expect(handshake?.detail).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    expect(handshake?.hint).toMatch(/caFile must be the CA/);
  });

  it("fails the handshake with a client-certificate hint when the service refuses the agent's certificate", async () => {
    const other = ensurePki(path.join(dir, 'other-pki'));
    const lines = await runChecks(
      config([], (s) => ({
        ...s,
        tls: { ...s.tls, certFile: other.paths.clientCert, keyFile: other.paths.clientKey },
      })),
      fast,
    );
    expect(by(lines, 'certificate chain')).toMatchObject({ ok: true, warn: true });
    const handshake = by(lines, 'tls handshake');
    expect(handshake?.ok).toBe(false);
    expect(handshake?.hint).toMatch(/refused the client certificate/);
    expect(handshake?.detail).toMatch(/^127\.0\.0\.1:\d+: (ERR_SSL_\w*ALERT\w*|ECONNRESET|CLOSED): /);
    expect(by(lines, 'token')?.ok).toBe(false);
  });

  it('fails the token check with a client id/secret hint on a wrong secret, and stops before the API key', async () => {
    const secret = path.join(dir, 'wrong-secret');
    writeFileSync(secret, 'not-the-secret', { mode: 0o600 });
    const lines = await runChecks(
      config([{ name: 'a', workflowId: SEED.workflows.pdfEmail }], (s) => ({
        ...s,
        clientSecret: `\${file:${secret}}`,
      })),
      fast,
    );
    expect(by(lines, 'tls handshake')?.ok).toBe(true);
    expect(by(lines, 'token')).toMatchObject({ ok: false });
    expect(by(lines, 'token')?.hint).toMatch(/clientId and clientSecret/);
    expect(by(lines, 'api key')).toBeUndefined();
    expect(by(lines, 'folder workflows')).toMatchObject({ ok: true, warn: true });
  });

  it('fails the handshake with an apiUrl hint when nothing listens there', async () => {
    const lines = await runChecks(
      config([], (s) => ({ ...s, apiUrl: 'https://127.0.0.1:1/v1', authUrl: 'https://127.0.0.1:1' })),
      fast,
    );
    expect(by(lines, 'tls handshake')?.detail).toMatch(/^127\.0\.0\.1:1: ECONNREFUSED/);
    expect(by(lines, 'tls handshake')?.hint).toMatch(/service\.apiUrl/);
  });

  it('names each folder whose workflow is not validated or does not fit the mode', async () => {
    const lines = await runChecks(
      config([
        { name: 'unvalidated', workflowId: SEED.workflows.notValidated },
        { name: 'wrong-mode', workflowId: SEED.workflows.pdfEmail, mode: 'payload-word' },
        { name: 'missing', workflowId: 'wf_does_not_exist' },
      ]),
      fast,
    );
    expect(by(lines, 'folder unvalidated')?.detail).toMatch(/not validated; validate it in the portal/);
    expect(by(lines, 'folder wrong-mode')?.ok).toBe(false);
    expect(by(lines, 'folder wrong-mode')?.detail).toMatch(/payload-word/);
    expect(by(lines, 'folder missing')?.detail).toMatch(/does not exist/);
  });

  it('warns, without failing, when the certificate expires within 30 days', async () => {
    const validTo = new Date(new X509Certificate(readFileSync(service.tls['certFile']!)).validTo).getTime();
    const lines = await runChecks(config(), { ...fast, now: new Date(validTo - 10 * 86_400_000) });
    expect(by(lines, 'certificate expiry')).toMatchObject({ ok: true, warn: true });
    expect(by(lines, 'certificate expiry')?.detail).toMatch(/^10 days left/);
    expect(formatCheck(by(lines, 'certificate expiry')!)).toMatch(
      /^! certificate expiry: .*\n {4}fix: request a new/,
    );
    expect(lines.every((l) => l.ok)).toBe(true);
  });
});

describe('free disk line', () => {
  const gib = 1024 ** 3;
  it('passes with room, warns under 1 GiB or 5 %, fails under 100 MiB', () => {
    expect(diskLine('/d', { bavail: 50 * gib, blocks: 100 * gib, bsize: 1 })).toMatchObject({
      ok: true,
      warn: false,
    });
    expect(diskLine('/d', { bavail: 0.5 * gib, blocks: 100 * gib, bsize: 1 })).toMatchObject({
      ok: true,
      warn: true,
    });
    expect(diskLine('/d', { bavail: 4 * gib, blocks: 100 * gib, bsize: 1 })).toMatchObject({
      ok: true,
      warn: true,
    });
    const full = diskLine('/d', { bavail: DISK_FAIL_BYTES - 1, blocks: 100 * gib, bsize: 1 });
    expect(full).toMatchObject({ ok: false, detail: '99 MiB free (0.1 %)' });
  });
});

describe('the check command', () => {
  // Asynchronous: the sandbox answering the child runs in this process.
  const cli = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  it('exits 1 with a plain FAIL line and a fix when the configuration is invalid (output not a terminal)', async () => {
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(file, 'folders: 3\n');
    const run = await cli(['check', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^FAIL config: DOCEX_CONFIG_INVALID: .*\n/);
    expect(run.stdout).toContain('    fix: fix the file, see config/agent.example.yaml');
  });

  it('exits 1 naming the route and the companies when a {company} route leaves a company of the table without a workflow', async () => {
    const file = path.join(dir, 'no-company-workflow.yaml');
    writeFileSync(
      file,
      stringify({
        service,
        stateDir: './no-company-workflow/state',
        folders: [
          {
            name: 'clients',
            workflowId: SEED.workflows.pdfEmail,
            source: { type: 'local', path: './no-company-workflow/in' },
            routes: [{ match: '{company}-*.pdf' }],
            companies: {
              acme: SEED.managedCompanyId,
              globex: {
                managedCompanyId: SEED.secondManagedCompanyId,
                workflowId: SEED.workflows.secondManagedPdfEmail,
              },
            },
          },
        ],
      }),
    );
    const run = await cli(['check', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/^FAIL config: DOCEX_CONFIG_INVALID: /);
    expect(run.stdout).toContain(
      'folders[0].routes[0].workflowId: route "{company}-*.pdf" names no workflowId, and the companies table names none for "acme": give the route a workflowId (theirs), or each of them { managedCompanyId, workflowId }',
    );
  });

  it('exits 0 with one ok line per check on a good configuration; run as root, one warning says folder access is not tested', async () => {
    const file = path.join(dir, 'cli-good.yaml');
    mkdirSync(path.join(dir, 'cli-good-in', 'invoices'), { recursive: true });
    writeFileSync(
      file,
      stringify({
        service,
        stateDir: './cli-good-state',
        folders: [
          {
            name: 'invoices',
            workflowId: SEED.workflows.pdfEmail,
            source: { type: 'local', path: './cli-good-in/invoices' },
          },
        ],
      }),
    );
    const run = await cli(['check', '--config', file]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(10);
    // Run by root (as CI is): one line says why access is not tested, instead of one per folder.
    const asRoot = process.getuid?.() === 0;
    const warnings = lines.filter((l) => l.startsWith('WARN ') && !l.startsWith('WARN free disk'));
    expect(warnings).toEqual(
      asRoot ? [expect.stringMatching(/^WARN folder access: not tested: check runs as root/)] : [],
    );
    for (const line of lines.filter((l) => !l.startsWith('    fix: ') && !l.startsWith('WARN '))) {
      expect(line).toMatch(/^ok {3}\S/);
    }
  });
});
