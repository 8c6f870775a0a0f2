/**
 * An Agent on real temp folders, a real SQLite journal and a real sandbox over HTTPS + mTLS. The
 * agent and the sandbox share a ManualClock, so a test crosses an upload window by moving it. Files
 * are dropped by write + rename (the folders use the rename-in rule) so nothing waits for a settle time.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { Agent, type AgentClient, type AgentOptions } from '../../../src/agent/agent.js';
import { DocexClient } from '../../../src/api/index.js';
import {
  type AgentConfig,
  type AgentConfigInput,
  agentConfigSchema,
  inspectionSchema,
} from '../../../src/config/index.js';
import { ManualClock } from '../../../src/core/clock.js';
import type { Logger } from '../../../src/core/logger.js';
import type { NamesProfile } from '../../../src/domain/names-profile.js';
import { Inspector } from '../../../src/pipeline/isolate/inspector.js';
import type { PipelineJobs } from '../../../src/pipeline/types.js';
import { sandboxClientOptions } from '../../api/support/sandbox-client.js';
import { startTestSandbox, type TestSandbox } from '../../sandbox/sandbox-harness.js';
import { recipientLines } from '../../support/pdf-recipient.js';

export interface SandboxJob {
  id: string;
  name: string;
  workflowId: string;
  filename: string;
  status: string;
  uploadedSize: number | null;
  uploadedMd5: string | null;
}

export type FolderInput = NonNullable<AgentConfigInput['folders']>[number];

export interface Harness {
  dir: string;
  clock: ManualClock;
  sandbox: TestSandbox;
  client: DocexClient;
  logs: Array<Record<string, unknown>>;
  /** The same lines as written (JSON.parse keeps only the last of two equal keys). */
  lines: string[];
  log: Logger;
  config(
    folders: Array<Partial<FolderInput> & { name: string; workflowId: string }>,
    extra?: Partial<AgentConfigInput>,
  ): AgentConfig;
  startAgent(config: AgentConfig, options?: Partial<AgentOptions>): Promise<Agent>;
  folderPath(name: string): string;
  /** Writes under a temp name, then renames into the drop folder (rename-in). */
  drop(folder: string, name: string, content: Buffer | string): string;
  /** Advances the shared clock (agent and sandbox). */
  advance(ms: number): Promise<void>;
  jobs(): Promise<SandboxJob[]>;
  /** Stops every agent this harness started (afterEach: a failed test must not hold the state lock). */
  stopAgents(): Promise<void>;
  cleanup(): Promise<void>;
}

/**
 * A one-page PDF with `text` on top and, unless `recipient` is false, the lines the seeded PDF
 * workflows read their recipients from (recipientLines); `recipient` as an object overrides values
 * by kind. `padBytes` adds an unreferenced, unfiltered stream of that many `a` bytes (a file over
 * the 1 MiB the agent holds in memory, streamed from disk at its upload).
 */
export async function makePdf(
  text: string,
  options: { recipient?: boolean | Record<string, string>; padBytes?: number } = {},
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText(text, { x: 50, y: 780, size: 12, font });
  const recipient = options.recipient ?? true;
  if (recipient !== false) {
    const lines = recipientLines(recipient === true ? {} : recipient);
    lines.forEach((line, i) => {
      page.drawText(line, { x: 50, y: 750 - i * 16, size: 11, font });
    });
  }
  if (options.padBytes) doc.context.register(doc.context.stream(Buffer.alloc(options.padBytes, 'a')));
  return Buffer.from(await doc.save());
}

export const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('hex');

export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(p).map((f) => path.join(entry.name, f)));
    else out.push(entry.name);
  }
  return out.sort();
}

/**
 * A harness for the tests of the enclosing describe: made before them, its agents stopped after
 * each (a failed test must not hold the state lock), removed after them all.
 */
export function useHarness(options: Parameters<typeof makeHarness>[0], set: (h: Harness) => void): void {
  let made: Harness | undefined;
  beforeAll(async () => {
    made = await makeHarness(options);
    set(made);
  });
  afterEach(async () => {
    await made?.stopAgents();
  });
  afterAll(async () => {
    await made?.cleanup();
  });
}

export async function makeHarness(
  options: { uploadWindowMs?: number; names?: NamesProfile } = {},
): Promise<Harness> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-pipe-'));
  const clock = new ManualClock(Date.now());
  const sandbox = await startTestSandbox({
    stateDir: path.join(dir, 'sandbox'),
    clock,
    ...(options.uploadWindowMs ? { uploadWindowMs: options.uploadWindowMs } : {}),
    ...(options.names ? { names: options.names } : {}),
  });
  const inspector = new Inspector();
  const logs: Array<Record<string, unknown>> = [];
  const lines: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        logs.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const client = new DocexClient(
    sandboxClientOptions(sandbox.sandbox, {
      clock,
      retry: { baseDelayMs: 5, maxDelayMs: 50, maxAttempts: 2 },
    }),
  );
  const agents: Agent[] = [];
  const folderPath = (name: string) => path.join(dir, 'in', name);
  const h: Harness = {
    dir,
    clock,
    sandbox,
    client,
    logs,
    lines,
    log,
    folderPath,
    config(folders, extra = {}) {
      return agentConfigSchema.parse({
        service: undefined,
        sandbox: { enabled: true },
        stateDir: path.join(dir, 'state'),
        concurrency: 4,
        shutdownGraceMs: 2000,
        folders: folders.map((f) => ({
          source: { type: 'local', path: folderPath(f.name) },
          // The drop folders of a test are made at start, as the sample configuration's are.
          create: true,
          archiveDir: path.join(dir, 'archive', f.name),
          errorDir: path.join(dir, 'error', f.name),
          stability: { kind: 'rename-in' },
          ...f,
        })),
        // Output folders in the temp dir, not relative to the working directory.
        returns: {
          statuses: { target: { type: 'local', path: path.join(dir, 'out', 'statuses') } },
          proofs: { target: { type: 'local', path: path.join(dir, 'out', 'proofs') } },
        },
        // Off unless a test turns it on (it downloads the sandbox's seeded documents); in the temp dir.
        peppolInbox: {
          enabled: false,
          target: { type: 'local', path: path.join(dir, 'out', 'peppol-inbox') },
        },
        ...extra,
      });
    },
    async startAgent(config, agentOptions = {}) {
      const defaultInspection =
        JSON.stringify(config.inspection) === JSON.stringify(inspectionSchema.parse({}));
      const agent = await Agent.start({
        config,
        log,
        clock,
        client,
        // One inspector (its workers started once) for every agent of the file that keeps the defaults.
        ...(defaultInspection ? { inspector } : {}),
        source: { statIntervalMs: 10, rescanIntervalMs: 200, watch: true },
        uploadMarginMs: 1000,
        retryDelayMs: () => 20,
        windowRecheckMs: 20,
        ...agentOptions,
      });
      agents.push(agent);
      return agent;
    },
    drop(folder, name, content) {
      const target = path.join(folderPath(folder), name);
      mkdirSync(path.dirname(target), { recursive: true });
      const temp = path.join(folderPath(folder), `${name}.part`);
      writeFileSync(temp, content);
      renameSync(temp, target);
      return target;
    },
    async advance(ms) {
      // The sandbox clock stands on the same ManualClock: one move shifts both.
      clock.advance(ms);
      sandbox.sandbox.tick();
      await sandbox.sandbox.settle();
    },
    async jobs() {
      const answer = await sandbox.control('GET', '/jobs');
      return answer.body.items as SandboxJob[];
    },
    async stopAgents() {
      for (const agent of agents.splice(0)) await agent.stop().catch(() => {});
    },
    async cleanup() {
      await h.stopAgents();
      await inspector.close();
      await client.close();
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** The harness client with some job calls replaced (faults: lost answers, hangs, expiry). */
export function clientWith(
  base: DocexClient,
  overrides: (real: PipelineJobs) => Partial<PipelineJobs>,
): AgentClient {
  const j = base.jobs;
  const real: PipelineJobs = {
    createSingleFile: j.createSingleFile.bind(j),
    createPayloadPdf: j.createPayloadPdf.bind(j),
    createPayloadWord: j.createPayloadWord.bind(j),
    uploadFile: j.uploadFile.bind(j),
    get: j.get.bind(j),
    iterate: j.iterate.bind(j),
  };
  return { jobs: { ...real, ...overrides(real) }, workflows: base.workflows };
}
