/**
 * `docex-agent submit <file> --workflow <id> [--config <file>]`: one file, one job, for cron
 * scripts. Same journal and steps as the agent (so a rerun after a failure resumes, and the same
 * content twice is refused), but the file stays where it is. Exit 0 only once the upload is confirmed.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { AgentClient } from '../agent/agent.js';
import { checkFolderWorkflow } from '../agent/workflow-check.js';
import { type AgentConfig, agentConfigSchema, journalLocationOf, loadConfig } from '../config/index.js';
import { type Clock, systemClock } from '../core/clock.js';
import { DocexError, isDocexError } from '../core/errors.js';
import { createLogger, type Logger } from '../core/logger.js';
import {
  acquireJournalLock,
  DEFAULT_UPLOAD_MARGIN_MS,
  isFinal,
  type JournalItem,
  type JournalStore,
  openJournal,
} from '../journal/index.js';
import { FreshIntents } from '../pipeline/fresh-intents.js';
import { intakeItem } from '../pipeline/intake.js';
import { Inspector } from '../pipeline/isolate/inspector.js';
import { driveSingleFile } from '../pipeline/single-file.js';
import { type FolderRuntime, RetryLater, type StepContext } from '../pipeline/types.js';
import { hashFile } from '../sources/hash.js';
import { openCommandConnection } from './builtin-sandbox.js';
import type { TextSink } from './output/cli-io.js';
import { type ProgressSink, progressLine } from './output/progress.js';

export const SUBMIT_FOLDER = 'submit';

export interface SubmitOptions {
  file: string;
  workflowId: string;
  config: AgentConfig;
  log: Logger;
  clock?: Clock;
  /** An existing client (tests); otherwise opened from the config. */
  client?: AgentClient;
  allowDuplicates?: boolean;
  /** Tries when the service is unwell before giving up (the journal keeps the state for a rerun). */
  tries?: number;
  retryDelayMs?: number;
  /** Told the bytes of the upload sent so far (the progress line on a terminal). */
  onUploadProgress?: (bytesSent: number) => void;
}

export interface SubmitResult {
  ok: boolean;
  item: JournalItem | undefined;
  message: string;
}

/** One submit: lock, journal, workflow check, claim (or resume), drive; answers the final item. */
export async function submitFile(options: SubmitOptions): Promise<SubmitResult> {
  const { config, log } = options;
  const clock = options.clock ?? systemClock;
  const filePath = path.resolve(options.file);
  const lock = acquireJournalLock(config.stateDir);
  let journal: JournalStore;
  try {
    journal = await openJournal(journalLocationOf(config), { clock, log });
  } catch (err) {
    lock.release();
    throw err;
  }
  const connection = options.client ? undefined : await openCommandConnection(config, log, options.clock);
  const client = options.client ?? connection!.client;
  const inspector = new Inspector(config.inspection, log);
  try {
    const workflow = await client.workflows.get(options.workflowId);
    const folder = agentConfigSchema.shape.folders.parse([
      {
        name: SUBMIT_FOLDER,
        source: { type: 'local', path: path.dirname(filePath) },
        workflowId: options.workflowId,
        allowDuplicates: options.allowDuplicates ?? false,
      },
    ])[0]!;
    const check = checkFolderWorkflow(folder, workflow);
    if (!check.ok) throw new DocexError('DOCEX_FOLDER_WORKFLOW', check.reason);
    if (check.mode !== 'single-file') {
      throw new DocexError(
        'DOCEX_SUBMIT_MODE',
        `workflow ${options.workflowId} takes ${check.mode} files; drop them in a folder`,
      );
    }
    const runtime: FolderRuntime = { config: folder, mode: check.mode, workflow };
    const ctx: StepContext = {
      journal,
      jobs: client.jobs,
      clock,
      log,
      maxFileBytes: config.maxFileBytes,
      inspector,
      uploadMarginMs: DEFAULT_UPLOAD_MARGIN_MS,
      lookupMarginMs: 15 * 60_000,
      keepFiles: true,
      signal: new AbortController().signal,
      intents: new FreshIntents(),
      ...(options.onUploadProgress ? { onUploadProgress: options.onUploadProgress } : {}),
    };
    // A rerun after a failure resumes the unfinished item of this very file instead of a duplicate.
    const { sha256 } = await hashFile(filePath);
    let item =
      (await journal.byPath(filePath)).find(
        (i) => i.folder === SUBMIT_FOLDER && i.sha256 === sha256 && !isFinal(i.state),
      ) ??
      (
        await intakeItem(ctx, runtime, {
          name: path.basename(filePath),
          originalPath: filePath,
          claimedPath: filePath,
        })
      ).item;
    const tries = options.tries ?? 3;
    for (let n = 1; ; n++) {
      try {
        item = await driveSingleFile(ctx, runtime, item, { rehash: true });
        break;
      } catch (err) {
        if (!(err instanceof RetryLater) || n >= tries) throw err;
        log.warn({ file: item.fileName, code: err.code, try: n }, 'submit must wait');
        await new Promise((r) => setTimeout(r, options.retryDelayMs ?? 2000 * n));
        item = (await journal.get(item.id)) ?? item;
      }
    }
    if (item.state === 'done') {
      return { ok: true, item, message: `uploaded ${item.fileName} as job ${item.jobId}` };
    }
    return { ok: false, item, message: `${item.fileName} refused: ${item.rejectCode}: ${item.rejectReason}` };
  } finally {
    await inspector.close();
    await connection?.client.close();
    await connection?.sandbox?.stop();
    await journal.close();
    lock.release();
  }
}

/** The `submit` command, loaded when it runs. */
export async function submitCommand(
  file: string,
  opts: { workflow: string; config: string; allowDuplicate?: boolean },
  io: { stdout: TextSink; stderr: ProgressSink } = process,
): Promise<void> {
  const { stdout, stderr } = io;
  try {
    const { config } = loadConfig(opts.config);
    const log = createLogger({ level: process.env['DOCEX_LOG_LEVEL'] ?? 'warn' });
    // On a terminal only: bytes sent, rate and time left, rewritten in place.
    const size = await stat(file).then(
      (s) => s.size,
      () => undefined,
    );
    const progress = progressLine(stderr, {
      label: `uploading ${path.basename(file)}`,
      unit: 'bytes',
      total: size,
    });
    const result = await submitFile({
      file,
      workflowId: opts.workflow,
      config,
      log,
      allowDuplicates: opts.allowDuplicate ?? false,
      onUploadProgress: (sent) => progress.update(sent),
    }).finally(() => progress.end());
    (result.ok ? stdout : stderr).write(`${result.message}\n`);
    process.exitCode = result.ok ? 0 : 1;
    log.flush();
  } catch (err) {
    const text = isDocexError(err) ? `${err.code}: ${err.message}` : String(err);
    stderr.write(`docex-agent submit: ${text}\n`);
    process.exitCode = 1;
  }
}
