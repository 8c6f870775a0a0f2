import type { HostPace } from '../api/host-pace.js';
import type { DocexClient } from '../api/index.js';
import type { FolderConfig, FolderMode } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/error-codes.js';
import { DocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Workflow } from '../domain/wire.js';
import type { JournalStore } from '../journal/index.js';
import type { FreshIntents } from './fresh-intents.js';
import type { Inspection } from './inspect/inspect-file.js';
import type { Inspector } from './isolate/inspector.js';
import type { VerdictCache } from './verdicts.js';

/** The calls the pipeline makes; a DocexClient's `jobs` fits. */
export type PipelineJobs = Pick<
  DocexClient['jobs'],
  'createSingleFile' | 'createPayloadPdf' | 'createPayloadWord' | 'uploadFile' | 'get' | 'iterate'
>;

/** A folder that passed the start-up workflow check: its configuration, mode and workflow record. */
export interface FolderRuntime {
  config: FolderConfig;
  mode: FolderMode;
  workflow: Workflow;
  /**
   * The workflow records of the folder's routes by id (the start-up check fetched each); absent or
   * without an id: `workflow` (pipeline/routes.ts workflowOf).
   */
  workflows?: ReadonlyMap<string, Workflow>;
}

/** What a create's request must obey (callOptions): its signal, and on a shared journal its lease allowance. */
export interface SendAllowance {
  signal: AbortSignal;
  /** The lease allowance: ms left now, and the least the request is sent with (after its turn in the pace). */
  lease?: { leftMs: () => number; minLeftMs: number } | undefined;
}

export interface StepContext {
  journal: JournalStore;
  jobs: PipelineJobs;
  clock: Clock;
  log: Logger;
  maxFileBytes: number;
  /** Runs every parse of a dropped file in a worker, under memory and time limits. */
  inspector: Inspector;
  /** Upload only while this much of the window is left (recovery); smaller in tests. */
  uploadMarginMs: number;
  /** How far before the create intent the job lookup starts (service clock skew). */
  lookupMarginMs: number;
  /**
   * How long after a create that got no answer a lookup finding no job still cannot prove the
   * service never got it (the API's answer timeout); 0 or absent: no wait.
   */
  unansweredSettleMs?: number;
  /**
   * cluster.createMarginMs: a create whose turn in the pace of the service host comes with less of
   * its lease allowance left than this (or half of it, if less) is not sent (send-gate.ts);
   * absent: 0.
   */
  createMarginMs?: number;
  /** The host's monotonic clock in ms, which a create's lease allowance is counted on (performance.now; tests move their own). */
  monotonicNow?: () => number;
  /** One-shot submit: the file stays where it is (no archive or error folder). */
  keepFiles?: boolean;
  /** Aborted when the agent stops past its grace time. */
  signal: AbortSignal;
  /** Create intents this process recorded and has not sent yet (the send gate's memory). */
  intents: FreshIntents;
  /** Small files read (and maybe inspected) at their claim, by item id, while the item is driven. */
  held?: Map<number, HeldFile>;
  /** Inspection verdicts by content and settings, reused when the same bytes come again. */
  verdicts?: VerdictCache;
  /** Told the bytes of a streamed upload sent so far (`submit`'s progress line). */
  onUploadProgress?: (bytesSent: number) => void;
  /** Told when an item with a job is recorded done (recordDone): the return path reads the journal now. */
  onJobDone?: () => void;
  /** The pace of the service host, shared with the return path: each call's attempts wait in it. */
  pace?: HostPace;
  /**
   * Where the intake's service calls (a create, a lookup by name, an upload, a job's status) wait
   * for a place: `concurrency` of them in flight, a folder's own at most (call-slots.ts). Absent:
   * no bound but the scheduler's.
   */
  callSlots?: {
    run<T>(folder: string, priority: number, call: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  };
}

/** A small file as read at its claim. */
export interface HeldFile {
  bytes: Buffer;
  /** Its inspection at the claim, when it had one: validation uses it rather than a second parse. */
  inspection?: Inspection;
}

/**
 * Thrown by a step when the file must wait and be tried again (the service is unwell, not the
 * file): a DocexError whose code the shared retry policy classes (domain/retry-policy.ts).
 */
export class RetryLater extends DocexError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'RetryLater';
  }
}
