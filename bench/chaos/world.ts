/**
 * One chaos scenario's world: a sandbox process, optional TCP fault proxies in front of its hosts,
 * a drop folder with its archive and error folders, N distinct PDFs staged beside it, and the agent
 * process(es) run on it. A scenario drops, injects, lets the agent finish, then `check()`s.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { parse, stringify } from 'yaml';
import { clientOptionsFromService } from '../../src/agent/connection.js';
import { DocexClient } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/core/logger.js';
import { placeWriter } from '../../src/core/temp-name.js';
import { storeWebhookSecret } from '../../src/returns/webhook-secrets.js';
import { recipientLines } from '../../test/support/pdf-recipient.js';
import { startPostgresServer, type TestPostgresServer } from '../../test/support/postgres.js';
import { chaosAgentConfig, type SftpFolder } from './agent-config.js';
import {
  checkInvariants,
  type InputFile,
  type InvariantOptions,
  type InvariantReport,
  mergeReports,
} from './invariants.js';
import type { ChaosMode, DocumentSet } from './modes.js';
import { type ControlClient, controlClient, countDataFiles, listFolder, md5 } from './observe.js';
import {
  type AgentProcess,
  type ChaosSandbox,
  startAgentProcess,
  startChaosSandbox,
  stopChild,
} from './processes.js';
import {
  checkReturns,
  type OutputFile,
  type ReturnsObservation,
  type ReturnsReport,
  type ServiceEvent,
} from './returns-invariants.js';
import { startTcpProxy, type TcpFaultProxy } from './tcp-proxy.js';
import { startWebhookFanout, type WebhookFanout } from './webhook-fanout.js';

/** Where a world's agent keeps its journal: journal.sqlite in its state folder, or a PostgreSQL database. */
export type ChaosJournal = 'sqlite' | 'postgres';

export interface WorldOptions {
  name: string;
  files: number;
  /** Random bytes attached to each PDF (0: a one-page PDF of about 1 KiB). */
  padBytes?: number;
  /** TCP fault proxies to put in front of these hosts. */
  proxies?: { api?: boolean; auth?: boolean; files?: boolean };
  /** Where the drop, archive and error folders live (a small filesystem); default: the run folder. */
  foldersRoot?: string;
  concurrency?: number;
  /**
   * An SFTP drop folder instead of a local one: the served folder (the same path on both sides, as
   * the test sshd serves local paths) and the login, which may point at a TCP fault proxy.
   */
  sftp?: SftpFolder;
  /** The agent's HTTP time-outs (`service.timeouts`), e.g. `{ headersMs: '5s' }`. */
  timeouts?: Record<string, string>;
  /** What is dropped (modes.ts); default single PDFs. `files` then counts document sets. */
  mode?: ChaosMode | undefined;
  /** A compiled agent CLI (buildAgent); default the sources under tsx. */
  agentEntry?: string | undefined;
  /**
   * postgres: a PostgreSQL server of the world's own (test/support/postgres.ts, so a scenario may
   * restart or kill it) holds the journal. Default sqlite.
   */
  journal?: ChaosJournal | undefined;
  /**
   * With a PostgreSQL journal: the agent reaches the database through a TCP fault proxy
   * (`proxies.journal`); 'instance-0': only agent instance 0 does, the others connect directly.
   */
  journalProxy?: boolean | 'instance-0';
  /** The agent's journal.timeoutMs (e.g. '3s'); default the configuration's. */
  journalTimeout?: string;
  /** The agents' cluster section (several agents on one PostgreSQL journal). */
  cluster?: Record<string, string>;
  /**
   * Webhooks: every agent's receiver on, one subscription of the service pointing at a fan-out
   * proxy (`fanout`, this many slots) that delivers each delivery to every slot's agent at once;
   * each state folder gets the subscription's secret before its agent starts.
   */
  webhookSlots?: number;
  /**
   * The scenario waits until the return path settled (every job followed to its final events):
   * the checks want every proof and final status file then, not only none twice.
   */
  returnsSettled?: boolean;
}

export interface World {
  dir: string;
  inbox: string;
  archiveDir: string;
  errorDir: string;
  sandbox: ChaosSandbox;
  control: ControlClient;
  proxies: { api?: TcpFaultProxy; auth?: TcpFaultProxy; files?: TcpFaultProxy; journal?: TcpFaultProxy };
  /** The journal's PostgreSQL server (journal: 'postgres'). */
  postgres?: TestPostgresServer;
  /** The load balancer duplicating webhook deliveries (webhookSlots). */
  fanout?: WebhookFanout;
  /** Where the agents write statuses (`statuses/`) and proofs (`proofs/`). */
  outputsDir: string;
  inputs: InputFile[];
  /** The document sets dropped (a single PDF is a set of one). */
  sets: DocumentSet[];
  /** Renames staged sets into the drop folder (all still staged when `count` is absent). */
  drop(count?: number): number;
  staged(): number;
  /**
   * Starts an agent process. `instance`: several agents on one journal, each with a state folder of
   * its own (`state-<instance>`, another host as far as leases go); default the world's one agent.
   */
  startAgent(env?: Record<string, string>, instance?: number): AgentProcess;
  agents: AgentProcess[];
  /** Names of the files claimed and not yet placed (in `.processing/`). */
  inFlight(): string[];
  placed(): number;
  /**
   * Waits until every input (or the files of the first `sets` sets) is archived or refused; throws
   * with the agent's last lines when `timeoutMs` pass with no file placed.
   */
  waitPlaced(timeoutMs: number, sets?: number): Promise<void>;
  /** Files named in a warning (a retry, a broken transfer) by any agent process of this world. */
  affected(): Set<string>;
  /** Stops the running agent with SIGTERM; answers its exit code. */
  stopAgent(): Promise<number | null>;
  /** Stops every agent still running with SIGTERM; answers their exit codes. */
  stopAgents(): Promise<(number | null)[]>;
  check(options?: InvariantOptions): Promise<InvariantReport>;
  /** What the return-path checks look at now (the service's events, the outputs, the logs). */
  returnsObservation(): Promise<ReturnsObservation>;
  /** The return path's checks alone; `settled`: completeness too (see returns-invariants.ts). */
  checkReturns(settled: boolean): Promise<ReturnsReport>;
  close(): Promise<void>;
}

async function makePdf(text: string, padBytes: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  // The recipient lines the seeded PDF workflows read: the documents can be delivered.
  [text, ...recipientLines()].forEach((line, i) => {
    page.drawText(line, { x: 50, y: 780 - 16 * i, size: 12, font });
  });
  if (padBytes > 0)
    await doc.attach(randomBytes(padBytes), 'pad.bin', { mimeType: 'application/octet-stream' });
  return Buffer.from(await doc.save());
}

async function pdfSet(i: number, content: Buffer): Promise<DocumentSet> {
  const name = `doc-${String(i).padStart(5, '0')}.pdf`;
  return {
    itemName: name,
    itemSha256: createHash('sha256').update(content).digest('hex'),
    itemMd5: md5(content),
    files: [{ name, content }],
    documents: [{ rowIndex: undefined, uploadMd5: md5(content) }],
  };
}

export async function createWorld(options: WorldOptions): Promise<World> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `docex-chaos-${options.name}-`));
  const folders = options.foldersRoot ?? dir;
  const sftp = options.sftp;
  // An SFTP folder is served from a local path: files are staged beside it and renamed in.
  const inbox = sftp ? sftp.remotePath : path.join(folders, 'in');
  const staging = sftp ? path.join(path.dirname(sftp.remotePath), 'staging') : path.join(folders, 'staging');
  const archiveDir = path.join(folders, 'archive');
  const errorDir = path.join(folders, 'error');
  mkdirSync(inbox, { recursive: true });
  mkdirSync(staging, { recursive: true });

  const want = options.proxies ?? {};
  const proxies: World['proxies'] = {};
  if (want.api) proxies.api = await startTcpProxy();
  if (want.auth) proxies.auth = await startTcpProxy();
  if (want.files) proxies.files = await startTcpProxy();
  let postgres: TestPostgresServer | undefined;
  let journalUrl: string | undefined;
  let directJournalUrl: string | undefined;
  if (options.journal === 'postgres') {
    postgres = await startPostgresServer();
    journalUrl = await postgres.createDatabase();
    directJournalUrl = journalUrl;
    if (options.journalProxy) {
      proxies.journal = await startTcpProxy({ target: { host: postgres.host, port: postgres.port } });
      const url = new URL(journalUrl);
      url.host = `127.0.0.1:${proxies.journal.port}`;
      journalUrl = url.toString();
    }
  }
  const sandbox = await startChaosSandbox(
    path.join(dir, 'sandbox'),
    proxies.files ? `https://127.0.0.1:${proxies.files.port}` : undefined,
  );
  const { urls, paths } = sandbox.info;
  const target = (url: string) => new URL(url);
  for (const [proxy, url] of [
    [proxies.api, urls.api],
    [proxies.auth, urls.auth],
    [proxies.files, urls.files],
  ] as const) {
    if (proxy) proxy.setTarget(target(url).hostname, Number(target(url).port));
  }
  const control = controlClient(urls.control, readFileSync(paths.caCert, 'utf8'));

  const fragment = parse(readFileSync(paths.agentConfigFragment, 'utf8')) as {
    service: Record<string, unknown>;
  };
  const via = (proxy: TcpFaultProxy | undefined, direct: string) =>
    proxy ? `https://127.0.0.1:${proxy.port}` : direct;
  const configFile = path.join(dir, 'agent.yaml');
  const config = chaosAgentConfig({
    service: fragment.service,
    apiUrl: via(proxies.api, urls.api),
    authUrl: via(proxies.auth, urls.auth),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
    stateDir: path.join(dir, 'state'),
    outputsDir: path.join(dir, 'out'),
    ...(journalUrl
      ? {
          journal: {
            url: journalUrl,
            ...(options.journalTimeout ? { timeoutMs: options.journalTimeout } : {}),
          },
        }
      : {}),
    ...(options.cluster ? { cluster: options.cluster } : {}),
    webhooks: options.webhookSlots !== undefined,
    concurrency: options.concurrency ?? 4,
    inbox,
    archiveDir,
    errorDir,
    ...(sftp ? { sftp } : {}),
    ...(options.mode ? { folder: options.mode.folder } : {}),
  });
  writeFileSync(configFile, stringify(config));
  const fanout = options.webhookSlots ? await startWebhookFanout(options.webhookSlots) : undefined;
  const subscription = fanout ? await subscribe(configFile, fanout.url) : undefined;
  const stateDirOf = (instance: number | undefined) =>
    path.join(dir, instance === undefined ? 'state' : `state-${instance}`);
  const stateDirs = new Map<AgentProcess, string>();
  /** The temp names' writers of agents SIGKILLed whose place no agent of this world started at again. */
  const killedWriters = (): string[] => {
    const killed = agents.filter((a) => a.child.signalCode === 'SIGKILL').map((a) => stateDirs.get(a)!);
    const again = new Set(
      agents.filter((a) => a.child.signalCode !== 'SIGKILL').map((a) => stateDirs.get(a)),
    );
    return killed.filter((d) => !again.has(d)).map(placeWriter);
  };
  const configOf = (instance: number | undefined): string => {
    const stateDir = stateDirOf(instance);
    // What an operator does for each host: the same signing secret in every state folder.
    if (subscription) storeWebhookSecret(stateDir, subscription.id, subscription.secret);
    if (instance === undefined) return configFile;
    const file = path.join(dir, `agent-${instance}.yaml`);
    if (!existsSync(file)) {
      const direct = options.journalProxy === 'instance-0' && instance !== 0;
      const journal = direct ? { journal: { ...(config['journal'] as object), url: directJournalUrl } } : {};
      writeFileSync(file, stringify({ ...config, ...journal, stateDir }));
    }
    return file;
  };

  const inputs: InputFile[] = [];
  const sets: DocumentSet[] = [];
  for (let i = 0; i < options.files; i++) {
    const tag = randomBytes(8).toString('hex');
    const set = options.mode
      ? await options.mode.make(i, tag)
      : await pdfSet(i, await makePdf(`${options.name} document ${i} ${tag}`, options.padBytes ?? 0));
    mkdirSync(path.join(staging, String(i)));
    for (const file of set.files) {
      writeFileSync(path.join(staging, String(i), file.name), file.content);
      inputs.push({ name: file.name, md5: md5(file.content), companion: file.name !== set.itemName });
    }
    sets.push(set);
  }
  let next = 0;
  let wanted = 0;
  const oneAtATime = options.mode?.oneSetAtATime === true;
  // Companions first, the item's file last: what an ERP that knows the pairing does.
  const pump = () => {
    for (; next < wanted; next++) {
      const set = sets[next]!;
      if (oneAtATime && existsSync(path.join(inbox, set.itemName))) return;
      for (const file of set.files) {
        renameSync(path.join(staging, String(next), file.name), path.join(inbox, file.name));
      }
    }
  };
  const agents: AgentProcess[] = [];
  const placedHere = () => countDataFiles(archiveDir) + countDataFiles(errorDir);
  // SFTP: placed once the local copy and the remote file are both where they belong.
  const placed = () =>
    sftp
      ? Math.min(
          placedHere(),
          countDataFiles(path.join(inbox, '.archive')) + countDataFiles(path.join(inbox, '.error')),
        )
      : placedHere();
  const current = () => agents.at(-1);
  const running = () => agents.filter((a) => a.child.exitCode === null && a.child.signalCode === null);

  const world: World = {
    dir,
    inbox,
    archiveDir,
    errorDir,
    sandbox,
    control,
    proxies,
    ...(postgres ? { postgres } : {}),
    ...(fanout ? { fanout } : {}),
    outputsDir: path.join(dir, 'out'),
    inputs,
    sets,
    agents,
    drop(count) {
      const end = Math.min(sets.length, count === undefined ? sets.length : wanted + count);
      const n = end - wanted;
      wanted = end;
      pump();
      return n;
    },
    staged: () => sets.length - next,
    startAgent(env, instance) {
      const agent = startAgentProcess(configOf(instance), env, options.agentEntry);
      agents.push(agent);
      stateDirs.set(agent, stateDirOf(instance));
      return agent;
    },
    inFlight() {
      try {
        return readdirSync(path.join(inbox, '.processing')).filter((n) => !n.startsWith('.'));
      } catch {
        return [];
      }
    },
    placed,
    async waitPlaced(timeoutMs, setCount) {
      // Stuck means no progress: the deadline moves with every file placed (a loaded machine, or a
      // mode whose sets go one at a time, is slow, not stuck).
      let deadline = Date.now() + timeoutMs;
      let seen = placed();
      const want =
        setCount === undefined
          ? inputs.length
          : sets.slice(0, setCount).reduce((n, set) => n + set.files.length, 0);
      while (placed() < want) {
        pump();
        if (placed() > seen) {
          seen = placed();
          deadline = Date.now() + timeoutMs;
        }
        // Several agents: stuck only once none runs (a scenario kills and replaces them).
        const agent = current();
        if (agent && running().length === 0 && agent.child.exitCode !== null) {
          throw new Error(`agent exited (${agent.child.exitCode}):\n${agent.tail.join('\n')}`);
        }
        if (Date.now() > deadline) {
          throw new Error(
            `${placed()} of ${want} files placed, none more in the last ${timeoutMs} ms; last agent lines:\n${agent?.tail.slice(-15).join('\n') ?? '(no agent)'}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    affected() {
      const files = new Set<string>();
      for (const agent of agents) for (const file of agent.warned) files.add(file);
      return files;
    },
    async stopAgent() {
      const agent = current();
      if (!agent) return null;
      await stopChild(agent.child);
      return agent.exited;
    },
    async stopAgents() {
      const alive = running();
      await Promise.all(alive.map((a) => stopChild(a.child)));
      return Promise.all(alive.map((a) => a.exited));
    },
    async returnsObservation() {
      const outputs = path.join(dir, 'out');
      const statusDir = path.join(outputs, 'statuses');
      const statuses: OutputFile[] = listFolder(statusDir).map((e) => ({
        path: e.path,
        ...(/\.(status\.json|csv)$/.test(e.path)
          ? { text: readFileSync(path.join(statusDir, e.path), 'utf8') }
          : {}),
      }));
      const proofsWritten = new Map<string, number>();
      for (const agent of agents) {
        for (const [key, n] of agent.proofsWritten) proofsWritten.set(key, (proofsWritten.get(key) ?? 0) + n);
      }
      const events = (await control.call('GET', '/sending-events')) as { items: ServiceEvent[] };
      return {
        jobs: await control.jobs(),
        events: events.items,
        proofs: listFolder(path.join(outputs, 'proofs')),
        statuses,
        proofsWritten,
        ...(fanout ? { webhookAnswers: fanout.answers() } : {}),
      };
    },
    async checkReturns(settled) {
      const refusedMd5s = new Set(listFolder(errorDir).map((e) => e.md5));
      const refusedItems = new Set(sets.filter((s) => refusedMd5s.has(s.itemMd5)).map((s) => s.itemName));
      return checkReturns(await world.returnsObservation(), { sets, refusedItems, settled });
    },
    async check(checkOptions = {}) {
      // An SFTP folder's remote archive and error folders sit inside it.
      const leftInInbox = listFolder(inbox)
        .map((e) => e.path)
        .filter((p) => !sftp || !/^\.(archive|error)\//.test(p));
      const report = checkInvariants(
        inputs,
        {
          jobs: await control.jobs(),
          archive: listFolder(archiveDir),
          error: listFolder(errorDir),
          leftInInbox,
          outputs: listFolder(path.join(dir, 'out')),
        },
        { ...checkOptions, sets, killedWriters: killedWriters() },
      );
      const returns = await world.checkReturns(options.returnsSettled === true);
      const withReturns: InvariantReport = {
        ...report,
        ok: report.ok && returns.violations.length === 0,
        lost: [...report.lost, ...returns.missing.map((m) => `returns: ${m}`)],
        duplicates: [...report.duplicates, ...returns.duplicates.map((d) => `returns: ${d}`)],
        violations: [...report.violations, ...returns.violations.map((v) => `returns: ${v}`)],
        returns: { proofs: returns.proofs, statusFiles: returns.statusFiles },
      };
      if (!sftp) return withReturns;
      // The remote side too: each file in the remote archive or error folder exactly once.
      const remote = checkInvariants(
        inputs,
        {
          jobs: [],
          archive: listFolder(path.join(inbox, '.archive')),
          error: listFolder(path.join(inbox, '.error')),
          leftInInbox,
        },
        { ...checkOptions, placementOnly: true },
      );
      return mergeReports(withReturns, remote, 'remote: ');
    },
    async close() {
      for (const agent of agents) await stopChild(agent.child, 2_000);
      await control.close();
      await fanout?.close();
      await sandbox.stop();
      for (const proxy of Object.values(proxies)) await proxy?.close();
      await postgres?.destroy();
      // DOCEX_CHAOS_KEEP=1: the world's folders stay, to look into a failed cell.
      if (process.env['DOCEX_CHAOS_KEEP'] === '1') process.stderr.write(`chaos: kept ${dir}\n`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The service's subscription to every job and sending-event webhook, pointing at `url`. */
async function subscribe(configFile: string, url: string): Promise<{ id: string; secret: string }> {
  const { config } = loadConfig(configFile);
  if (!config.service) throw new Error(`${configFile}: no service section`);
  const client = new DocexClient({ ...clientOptionsFromService(config.service), log: silentLogger() });
  try {
    const created = await client.webhooks.create({
      url,
      name: 'chaos fan-out',
      eventTypes: ['job.status.changed', 'sending.event.status.changed', 'sending.event.file.ready'],
    });
    if (!created.secret) throw new Error('the service answered a subscription without its secret');
    return { id: created.id, secret: created.secret };
  } finally {
    await client.close();
  }
}
