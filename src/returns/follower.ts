/**
 * The follower: decides which job to poll and which document to fetch, when. One loop wakes on
 * the clock (short real sleeps, so a moved ManualClock is noticed) and on nudges; it takes new jobs
 * from the journal feed when the pipeline says a job is done (jobsDone), polls the jobs due at each
 * firing of `follow.schedule` (their own backoff decides which are due), fetches due documents,
 * keeps as many of those in flight as its pacing allows (pacing.ts: grows while answers are good,
 * halves on 429/503, waits out a Retry-After, and `follow.maxCallsPerMinute` when set), then asks
 * each status format (status-writers.ts) to write what is due. A nudge (a webhook) polls its job at
 * once, through the same code.
 *
 * Each firing of `follow.schedule` is swept by one agent of those sharing a PostgreSQL journal: the
 * first to claim it polls the jobs due, the others skip that firing (their nudges, webhooks and
 * catch-up polls still run: a job's own backoff in the shared store keeps them from polling it
 * again at once). The daily CSV is claimed the same way (status-csv.ts).
 */
import path from 'node:path';
import { isApiError } from '../api/errors.js';
import { HostPace } from '../api/host-pace.js';
import type { CallOptions } from '../api/index.js';
import { Pacing, StartLog } from '../api/pacing.js';
import type { ReturnsConfig } from '../config/returns-schema.js';
import { sharedAbortController } from '../core/abort.js';
import type { Clock } from '../core/clock.js';
import { GarbagePacer } from '../core/collect.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { TaskClaim } from '../journal/index.js';
import type { OutputTarget } from '../outputs/types.js';
import { CallGate, RETURNS_KEY } from './call-gate.js';
import { type CronPlan, cronPlan } from './cron-next.js';
import { firstPollAt } from './follow-plan.js';
import {
  documentKey,
  documentTask,
  jobKey,
  jobTask,
  RETURNS_TEMP_DIR,
  type Task,
  type TaskContext,
} from './follow-tasks.js';
import type { JournalFeed } from './journal-feed.js';
import type { FollowClient } from './poll-job.js';
import { statusFilePath, utcDay } from './proof-names.js';
import { writeDueCsvs } from './status-csv.js';
import type { StatusWriter } from './status-writer.js';
import { statusWriters } from './status-writers.js';
import { type NewJob, POLL_UNFINISHED_KEY, type ReturnsStore } from './store.js';

export { DAILY_CSV_TASK } from './status-csv.js';

export const FEED_CURSOR = 'journal-history-cursor';
/** Longest wait after failed steps, in loop periods (30 s with the default 1 s period). */
const STEP_BACKOFF_MAX = 30;
/** Loop periods an idle follower sleeps at most between two steps. */
const IDLE_SLEEP_FACTOR = 5;
/** Catch-up polls of every unfinished job (webhooks may have been missed) are spread over this. */
export const CATCH_UP_SPREAD_MS = 60_000;

export interface FollowerOptions {
  store: ReturnsStore;
  feed: JournalFeed;
  client: FollowClient;
  config: ReturnsConfig;
  statusTarget: OutputTarget;
  proofTarget: OutputTarget;
  stateDir: string;
  clock: Clock;
  log: Logger;
  /** x-managed-company-id of a drop folder's jobs (read live: a reload may add folders). */
  companyOf?: (folder: string) => string | undefined;
  /**
   * The managed company recorded on a file item at its claim (a route's; '' for none), undefined
   * when none was recorded: the folder's (companyOf) then.
   */
  itemCompany?: (itemId: number) => Promise<string | undefined>;
  /**
   * A dropped file's path relative to its drop folder (`acme/invoices/x.pdf`): its status file and
   * proofs keep the sub-path. Absent: its name.
   */
  relativePathOf?: (source: {
    folder: string;
    fileName: string;
    sourcePath?: string | undefined;
    relativePath?: string | undefined;
  }) => string;
  /** Every managed company of the drop folders: where to look for an event of an unknown job. */
  companies?: () => string[];
  /** Longest real sleep of the loop (tests with a ManualClock use a few ms). */
  maxSleepMs?: number;
  /** Claims a task run once across the agents on the journal (absent: every task is this agent's). */
  claimTask?: TaskClaim;
  /** Several agents on one journal: a document being fetched is claimed this long (proofs.ts). */
  documentClaimMs?: number | undefined;
  /** The pace of the service host, shared with the intake (absent: the follower paces itself alone). */
  pace?: HostPace | undefined;
}

/** The cluster task of a firing of follow.schedule: one agent polls the jobs due. */
export const FOLLOW_SWEEP_TASK = 'returns:follow-sweep';
/** A firing is claimed for this share of the time to the next one. */
const SWEEP_CLAIM_SHARE = 0.8;
/**
 * A full GC after this many finished tasks (core/collect.ts GarbagePacer): each download lives
 * across its awaits, so a night of them promotes garbage faster than V8's incremental marking on
 * one thread collects it, and the heap's high-water mark, kept by V8, grew with the night.
 */
const COLLECT_EVERY_TASKS = 500;

export class Follower {
  readonly gate: CallGate;
  private readonly poll: CronPlan;
  private nextSweepAt: number;
  /** Each status format with the clock time it is next due. */
  private readonly statuses: { writer: StatusWriter; dueAt: number }[];
  /** The pipeline said a job is done since the journal was last read (see jobsDone). */
  private feedNudged = false;
  /** When the journal is read though no nudge came (see jobsDone): at once at start. */
  private feedDueAt = Number.NEGATIVE_INFINITY;
  /** Real time of the last read of the journal by the loop. */
  private feedReadAt = Number.NEGATIVE_INFINITY;
  private readonly nudged = new Set<string>();
  /** Jobs due at the last firing of the schedule, in due order (a Set: queued once). */
  private readonly sweep = new Set<string>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly pacer = new GarbagePacer(COLLECT_EVERY_TASKS, 'major');
  // One signal shared by every call in flight (follow.concurrency of them).
  private readonly abort = sharedAbortController();
  private wakeUp: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private lastWebhookAt = Number.NEGATIVE_INFINITY;
  private readonly maxSleepMs: number;
  private stepFailures = 0;
  private idleSteps = 0;
  /** What every task of the follower shares. */
  private readonly tasks: TaskContext;
  private stepRetryAt = 0;
  /** Every unfinished job is to be spread over the next CATCH_UP_SPREAD_MS (see catchUp). */
  private catchUpPending = false;
  /** Whether the store's POLL_UNFINISHED_KEY was read since start. */
  private requestChecked = false;

  constructor(private readonly opts: FollowerOptions) {
    const now = opts.clock.now();
    const { concurrency, maxCallsPerMinute } = opts.config.follow;
    const pace =
      opts.pace ??
      new HostPace(opts.clock, new Pacing({ concurrency }), opts.log, {
        maxSleepMs: opts.maxSleepMs ?? 1000,
      });
    pace.pacing.limitKey(
      RETURNS_KEY,
      maxCallsPerMinute === undefined ? [] : [new StartLog(maxCallsPerMinute)],
    );
    this.gate = new CallGate(pace, concurrency === 'auto' ? undefined : concurrency);
    this.poll = cronPlan(opts.config.follow.schedule);
    this.nextSweepAt = now;
    this.maxSleepMs = opts.maxSleepMs ?? 1000;
    this.tasks = this.taskContext();
    // Each format is due at the first step (days of CSV missed while the agent was down included).
    this.statuses = statusWriters({
      store: opts.store,
      target: opts.statusTarget,
      config: opts.config,
      log: opts.log,
      periodMs: this.maxSleepMs,
      stopping: () => this.abort.signal.aborted,
      ...(opts.claimTask ? { claimTask: opts.claimTask } : {}),
    }).map((writer) => ({ writer, dueAt: Number.NEGATIVE_INFINITY }));
  }

  start(): void {
    this.loopDone ??= this.loop();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wakeUp?.();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * The pipeline of this process recorded a job done: the journal is read at the next step, woken
   * now. Between nudges the follower does not read the journal on every step; a slow timer stays
   * as the safety net (one read per follow.firstPollMs of the clock, and at every start), for the
   * jobs no nudge announces: those finished by another agent sharing the PostgreSQL journal (whose
   * own follower may have died before reading them), and a job a nudged read could not see yet (the
   * PostgreSQL journal's read horizon lags a commit in progress). Read that often, such a job is
   * still found by the time its first poll is due (firstPollMs after it was recorded).
   */
  jobsDone(): void {
    this.feedNudged = true;
    // At most one read per loop period: a burst of jobs done wakes the loop once, and a nudge
    // that comes sooner is read at the end of the period (see safeStep).
    if (performance.now() - this.feedReadAt >= this.maxSleepMs) this.wakeUp?.();
  }

  /** Poll this job now (a webhook said it changed). Unknown jobs (not this agent's) are ignored. */
  async nudgeJob(jobId: string): Promise<boolean> {
    if (!(await this.recordNudge(jobId))) return false;
    this.pollNow(jobId);
    return true;
  }

  /**
   * Records in the store that this job is to be polled now (what a webhook must make durable before
   * its answer: a restart polls it even if this process never does). False: a job this agent does
   * not follow (the intake journal is read again first, in case the job is new).
   */
  async recordNudge(jobId: string): Promise<boolean> {
    const now = this.opts.clock.now();
    if (await this.opts.store.pollSoon(jobId, now)) return true;
    await this.syncFeed();
    if (await this.opts.store.pollSoon(jobId, now)) return true;
    this.opts.log.debug({ jobId }, 'nudge for a job this agent does not follow');
    return false;
  }

  /** Polls a job recorded by recordNudge at once (in memory); without a job, only wakes the loop. */
  pollNow(jobId?: string): void {
    if (jobId !== undefined) this.nudged.add(jobId);
    this.wakeUp?.();
  }

  /** Poll the job of this sending event now; asks the service for the event when it is not known yet. */
  async nudgeSendingEvent(sendingEventId: string): Promise<boolean> {
    return this.nudgeJob(await this.findJobOfEvent(sendingEventId, this.abort.signal));
  }

  /**
   * The job of a sending event: the store's, else the service's, asked within `deadlineMs` (the
   * call gate's wait included; past it, this rejects). undefined: the service knows no such event
   * for this agent (404 without and with every folder's company).
   */
  async jobOfSendingEvent(sendingEventId: string, deadlineMs: number): Promise<string | undefined> {
    const deadline = AbortSignal.timeout(deadlineMs);
    const found = this.findJobOfEvent(sendingEventId, AbortSignal.any([this.abort.signal, deadline])).catch(
      (err: unknown) => {
        if (isApiError(err) && err.status === 404) return undefined;
        throw err;
      },
    );
    // The signal ends a call or a wait in the gate; the race holds the deadline whatever ignores it.
    const late = new Promise<never>((_, reject) =>
      deadline.addEventListener('abort', () => reject(deadline.reason), { once: true }),
    );
    return Promise.race([found, late]);
  }

  private async findJobOfEvent(sendingEventId: string, signal: AbortSignal): Promise<string> {
    const known = await this.opts.store.event(sendingEventId);
    if (known) return known.jobId;
    // The event may belong to a managed company's job: the service answers 404 without its header.
    const companies = [undefined, ...(this.opts.companies?.() ?? [])];
    for (const [i, company] of companies.entries()) {
      try {
        const event = await this.opts.client.sendingEvents.get(
          sendingEventId,
          await this.gate.take({ signal, ...(company ? { managedCompanyId: company } : {}) }),
        );
        return event.jobId;
      } catch (err) {
        if (!(isApiError(err) && err.status === 404) || i === companies.length - 1) throw err;
      }
    }
    throw new Error('unreachable: the last company answers or throws');
  }

  /**
   * Records in the store that every unfinished job is to be polled soon (a webhook whose job could
   * not be found before its answer); the loop spreads those polls over CATCH_UP_SPREAD_MS.
   */
  async recordPollUnfinished(): Promise<void> {
    await this.opts.store.requestPollOfUnfinished(this.opts.clock.now());
    this.catchUpPending = true;
  }

  /**
   * Webhooks are on at this start: deliveries may have been missed while the agent was down, and a
   * job's saved next poll may be intervalWhileWebhooksMs away. Every unfinished job is polled
   * within CATCH_UP_SPREAD_MS instead, spread over it (the loop's next step records that).
   */
  catchUpAfterStart(): void {
    this.catchUpPending = true;
    this.wakeUp?.();
  }

  /** A webhook arrived: poll less often while they keep coming. */
  webhooksActive(at = this.opts.clock.now()): void {
    this.lastWebhookAt = Math.max(this.lastWebhookAt, at);
  }

  private receivingWebhooks(): boolean {
    return this.opts.clock.now() - this.lastWebhookAt < this.opts.config.follow.webhookQuietMs;
  }

  /** New done jobs from the intake journal; safe to call any time (one store transaction per batch). */
  async syncFeed(): Promise<number> {
    const { store, feed, config, clock } = this.opts;
    let added = 0;
    for (;;) {
      const cursor = Number((await store.getMeta(FEED_CURSOR)) ?? 0);
      const items = await feed.after(cursor, 500);
      if (items.length === 0) return added;
      const jobs: NewJob[] = items.map((it) => {
        const day = utcDay(it.source.claimedAt);
        // A recursive folder's file is kept under its relative path: its status and proofs keep the sub-path.
        const fileName = this.opts.relativePathOf?.(it.source) ?? it.source.fileName;
        return {
          jobId: it.jobId,
          source: { ...it.source, fileName, day },
          statusPath: (collision) => statusFilePath(day, fileName, it.source.itemId, collision),
          itemId: it.itemId,
          rowIndex: it.rowIndex,
          label: it.label,
          jobName: it.jobName,
          recordedAt: it.doneAt,
          firstPollAt: firstPollAt(it.doneAt, config.follow),
        };
      });
      added += await store.addJobs(jobs, FEED_CURSOR, String(items[items.length - 1]!.cursor), clock.now());
      if (items.length < 500) return added;
    }
  }

  /** Recorded companies of file items, by id (a job's company never changes): bounded, cleared when full. */
  private readonly itemCompanies = new Map<number, string | undefined>();

  private async options(source: { folder: string; itemId: number } | undefined): Promise<CallOptions> {
    let company: string | undefined;
    if (source) {
      let recorded = this.itemCompanies.get(source.itemId);
      if (recorded === undefined && this.opts.itemCompany) {
        recorded = await this.opts.itemCompany(source.itemId);
        if (this.itemCompanies.size >= 10_000) this.itemCompanies.clear();
        if (recorded !== undefined) this.itemCompanies.set(source.itemId, recorded);
      }
      company = recorded !== undefined ? recorded || undefined : this.opts.companyOf?.(source.folder);
    }
    return { signal: this.abort.signal, ...(company ? { managedCompanyId: company } : {}) };
  }

  private taskContext(): TaskContext {
    const { store, log, config, clock, client, proofTarget, stateDir } = this.opts;
    return {
      poll: {
        client,
        store,
        gate: this.gate,
        config,
        log,
        now: () => clock.now(),
        webhooksActive: () => this.receivingWebhooks(),
      },
      proofs: {
        client: client.sendingEvents,
        store,
        target: proofTarget,
        gate: this.gate,
        tempDir: path.join(stateDir, RETURNS_TEMP_DIR),
        log,
        now: () => clock.now(),
        claimMs: this.opts.documentClaimMs,
      },
      options: (source) => this.options(source),
      aborted: () => this.abort.signal.aborted,
    };
  }

  /** The follower's limit is in flight, or every place of the host's pace is taken (the intake's too). */
  private full(): boolean {
    return this.inFlight.size >= this.gate.limit() || this.gate.pace.free() === 0;
  }

  /**
   * Starts work until the pacing's limit is in flight: due documents first (a stream of nudges
   * must not starve them), then nudged jobs, then the sweep's jobs. The due documents are read
   * once per fill, not once per task (a fill follows each finished download), and no more of them
   * than can be used: of the first (in flight + free slots) due rows at most one per task in
   * flight is taken, so the rest fill every free slot.
   */
  private async fill(now: number): Promise<void> {
    if (this.full()) return;
    const free = Math.min(this.gate.limit() - this.inFlight.size, this.gate.pace.free());
    for (const doc of await this.opts.store.dueDocuments(now, this.inFlight.size + free)) {
      if (this.full()) return;
      if (!this.inFlight.has(documentKey(doc))) this.run(documentTask(this.tasks, doc));
    }
    // The store is read between the check and the start: the intake may take the last places
    // meanwhile, so the check is made again before a task takes one (the job stays queued).
    for (const jobId of this.nudged) {
      if (this.full()) return;
      if (this.inFlight.has(jobKey(jobId))) continue;
      const task = await jobTask(this.tasks, jobId);
      if (this.full()) return;
      this.nudged.delete(jobId);
      if (task) this.run(task);
    }
    for (const jobId of this.sweep) {
      if (this.full()) return;
      if (this.inFlight.has(jobKey(jobId))) {
        this.sweep.delete(jobId);
        continue;
      }
      const row = await this.opts.store.job(jobId);
      const task =
        row && !row.done && row.nextPollAt <= now ? await jobTask(this.tasks, jobId, row) : undefined;
      if (task && this.full()) return;
      this.sweep.delete(jobId);
      if (task) this.run(task);
    }
  }

  private run(task: Task): void {
    // The task's place is let go while one of its calls waits (its budget, a rate, a Retry-After).
    const place = this.gate.pace.hold();
    const running = task
      .run(this.gate.holding(place))
      .catch((err: unknown) => this.opts.log.error({ err, task: task.key }, 'follower task failed'))
      .finally(() => {
        place.release();
        this.inFlight.delete(task.key);
        this.pacer.passed(1);
        this.wakeUp?.();
      });
    this.inFlight.set(task.key, running);
  }

  /**
   * Asks each status format due at `now` to write; a failure is logged and the format asked again
   * after its retryMs. `stopping`: the last pass before the follower stops (formats with a lastPass).
   */
  private async writeStatuses(now: number, stopping = false): Promise<void> {
    for (const format of this.statuses) {
      const { writer } = format;
      if (now < format.dueAt || (stopping && !writer.lastPass)) continue;
      try {
        if (stopping) await writer.lastPass?.();
        else format.dueAt = await writer.write(now);
      } catch (err) {
        format.dueAt = now + writer.retryMs;
        this.opts.log.warn({ err, code: isDocexError(err) ? err.code : undefined }, writer.failed);
      }
    }
  }

  /** Every past UTC day with final events and no CSV yet (the daily CSV's own schedule aside). */
  writeDueCsvs(now = this.opts.clock.now()): Promise<string[]> {
    return writeDueCsvs(this.opts.store, this.opts.statusTarget, this.opts.log, now);
  }

  /**
   * Every unfinished job polled within CATCH_UP_SPREAD_MS, when asked (at a start with webhooks on,
   * by a webhook whose job was not found, or by a request left in the store by a stopped agent).
   * A failure leaves the request pending: the step fails and is tried again.
   */
  private async catchUp(now: number): Promise<void> {
    if (!this.requestChecked) {
      if ((await this.opts.store.getMeta(POLL_UNFINISHED_KEY)) !== undefined) this.catchUpPending = true;
      this.requestChecked = true;
    }
    if (!this.catchUpPending) return;
    const moved = await this.opts.store.pollUnfinishedWithin(now, CATCH_UP_SPREAD_MS);
    this.catchUpPending = false;
    this.opts.log.info(
      { jobs: moved, withinMs: CATCH_UP_SPREAD_MS },
      'unfinished jobs polled within a minute: webhooks may have been missed',
    );
  }

  /**
   * Whether this agent sweeps this firing (always without claimTask, or when the claim fails).
   * `firingAt`: its nominal time, the same on every agent: claimed per firing, so a firing is never
   * skipped because the one before was claimed late (a busy agent). The first sweep, at start, is
   * this agent's own.
   */
  private async claimSweep(now: number, next: number, firingAt: number): Promise<boolean> {
    const claim = this.opts.claimTask;
    if (!claim) return true;
    const windowMs = Number.isFinite(next)
      ? Math.max(1, Math.floor((next - now) * SWEEP_CLAIM_SHARE))
      : 60_000;
    try {
      const ours = await claim(FOLLOW_SWEEP_TASK, windowMs, firingAt);
      if (!ours) this.opts.log.debug('follow sweep: another agent polls this firing');
      return ours;
    } catch (err) {
      // The database down: polling twice is better than not at all (a poll only reads).
      this.opts.log.debug({ err }, 'follow sweep: the claim failed; this agent sweeps');
      return true;
    }
  }

  /** One pass of the loop; answers whether it found anything to do (new jobs, tasks, a sweep). */
  private async step(): Promise<boolean> {
    const { clock, store, log } = this.opts;
    let added = 0;
    if (this.feedNudged || clock.now() >= this.feedDueAt) {
      this.feedNudged = false;
      this.feedReadAt = performance.now();
      try {
        added = await this.syncFeed();
        this.feedDueAt = clock.now() + this.opts.config.follow.firstPollMs;
      } catch (err) {
        // Read again at the next step.
        this.feedDueAt = clock.now();
        log.warn({ err }, 'reading the intake journal failed: tried again');
      }
    }
    const now = clock.now();
    await this.catchUp(now);
    if (now >= this.nextSweepAt) {
      const next = this.poll.next(now) ?? Number.POSITIVE_INFINITY;
      if (await this.claimSweep(now, next, this.nextSweepAt)) {
        const due = (await store.dueJobs(now, 5000)).map((j) => j.jobId);
        for (const id of due) this.sweep.add(id);
      }
      this.nextSweepAt = next;
    }
    await this.fill(now);
    await this.writeStatuses(now);
    return added > 0 || this.inFlight.size > 0 || this.sweep.size > 0 || this.nudged.size > 0;
  }

  /**
   * One step that cannot end the loop: a failure (the store locked, full or unreachable, a broken feed) is
   * logged and the next step waits longer, up to STEP_BACKOFF_MAX loop periods. Answers the wait.
   */
  private async safeStep(): Promise<number> {
    // A nudge or a finished task wakes the loop early; the backoff still holds.
    const backoffLeft = this.stepRetryAt - performance.now();
    if (backoffLeft > 0) return backoffLeft;
    try {
      const busy = await this.step();
      this.stepFailures = 0;
      // Idle, the loop sleeps longer (up to IDLE_SLEEP_FACTOR periods): a new job in the intake
      // journal is first polled firstPollMs after it was recorded, and nudges and finished tasks
      // wake the loop at once anyway.
      this.idleSteps = busy ? 0 : this.idleSteps + 1;
      const sleep = this.maxSleepMs * Math.min(2 ** this.idleSteps, IDLE_SLEEP_FACTOR);
      // A nudge that came while the journal was read recently: read at the end of the period.
      const feedWait = this.feedNudged
        ? this.feedReadAt + this.maxSleepMs - performance.now()
        : Number.POSITIVE_INFINITY;
      return Math.max(
        1,
        Math.min(busy ? this.maxSleepMs : sleep, this.nextSweepAt - this.opts.clock.now(), feedWait),
      );
    } catch (err) {
      this.stepFailures++;
      const wait = this.maxSleepMs * Math.min(2 ** (this.stepFailures - 1), STEP_BACKOFF_MAX);
      this.opts.log.error(
        { err, code: isDocexError(err) ? err.code : undefined, failures: this.stepFailures, retryInMs: wait },
        'follower step failed: tried again later',
      );
      this.stepRetryAt = performance.now() + wait;
      return wait;
    }
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const wait = await this.safeStep();
      if (this.abort.signal.aborted) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait);
        const self = this;
        function done() {
          clearTimeout(timer);
          self.wakeUp = undefined;
          resolve();
        }
        this.wakeUp = done;
      });
    }
    await Promise.allSettled([...this.inFlight.values()]);
    await this.writeStatuses(this.opts.clock.now(), true);
  }
}
