/**
 * The inbound part of the agent: the Peppol inbox poller on its cron schedule, and the webhook
 * receiver. The receiver knows nothing of job following: it calls the callbacks it is given
 * (the controller wires them to the follower), and polls the Peppol inbox itself. A delivery is
 * acknowledged only once its effect is durable (webhook-receiver.ts); at start with webhooks on,
 * the follower is told that deliveries may have been missed while the agent was down.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import cron from 'node-cron';
import type { PeppolInboxConfig, WebhooksConfig } from '../config/inbound-schema.js';
import { parseListen } from '../config/inbound-schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { JournalLocation, TaskClaim } from '../journal/index.js';
import type { OutputHealth } from '../outputs/health.js';
import { openOutputTarget } from '../outputs/open-target.js';
import type { RetainedOutput } from '../outputs/retention.js';
import type { OutputTarget, SharedWriting } from '../outputs/types.js';
import { cronPlan } from './cron-next.js';
import type { InboxStore } from './inbox-store.js';
import { openInboxStore } from './open-stores.js';
import { PeppolPoller, type PeppolSource } from './peppol-poller.js';
import { type AfterAnswer, type InboundCallbacks, routeDelivery } from './webhook-events.js';
import { WebhookReceiver } from './webhook-receiver.js';
import { SecretRing, webhookSecretsDir } from './webhook-secrets.js';

/** Calls `fn` when a cron expression fires; node-cron by default (tests pass their own). */
export type Scheduler = (expression: string, fn: () => void) => { stop(): unknown };

export const nodeCronScheduler: Scheduler = (expression, fn) =>
  cron.schedule(expression, fn, { name: 'peppol-inbox', noOverlap: true });

/** How long a handled webhook id is remembered (the sender retries for about 45 minutes). */
export const WEBHOOK_ID_MEMORY_MS = 7 * 86_400_000;

export interface InboundOptions {
  config: { stateDir: string; peppolInbox: PeppolInboxConfig; webhooks: WebhooksConfig };
  /** Where the journal is: the inbox store is kept beside it (inbox.sqlite, or the same database). */
  journal: JournalLocation;
  /** Without `peppol` (a narrow test client) the inbox is not polled. */
  client: { peppol?: PeppolSource | undefined };
  clock: Clock;
  log: Logger;
  callbacks?: FollowerCallbacks;
  scheduler?: Scheduler;
  /** Replaces the configured inbox target (tests, fault injection). */
  target?: OutputTarget;
  /** Told of every write to the inbox output. */
  outputHealth?: OutputHealth;
  /** Clock of the webhook timestamp check; real time by default. */
  receiverClock?: Clock;
  /** Claims a task run once across the agents on the journal (absent: every poll is this agent's). */
  claimTask?: TaskClaim;
  /** Several agents on one journal write the inbox: temp names of this agent's own. */
  sharedWriting?: SharedWriting | undefined;
}

/** The cluster task of a scheduled Peppol inbox poll: one agent polls per firing. */
const PEPPOL_POLL_TASK = 'returns:peppol-poll';
/** A firing is claimed for this share of the time to the next one. */
const POLL_CLAIM_SHARE = 0.8;

export interface Inbound {
  readonly store: InboxStore;
  readonly poller: PeppolPoller | undefined;
  readonly receiver: WebhookReceiver | undefined;
  /** The Peppol inbox output, for retention. */
  readonly outputs: RetainedOutput[];
  /** Counts since start for /metrics. */
  stats(): { peppolDocumentsArchived: number; webhookDeliveries: { accepted: number; rejected: number } };
  stop(): Promise<void>;
}

/**
 * A scheduled poll runs unless webhooks arrived within `quietMs` and the last poll is younger than
 * that: webhooks make polls sooner, the schedule stays as the slower safety net. Pure.
 */
export function scheduledPollDue(
  now: number,
  lastPassAt: number | undefined,
  lastWebhookAt: number | undefined,
  quietMs: number,
): boolean {
  if (lastWebhookAt === undefined || now - lastWebhookAt > quietMs) return true;
  return lastPassAt === undefined || now - lastPassAt >= quietMs;
}

/**
 * The inbox target: a local folder or a folder on an SFTP server. `shared`: other agents on the
 * journal may write it (the inbox poll runs once across them, but one may take over from another
 * whose write is still in flight).
 */
export function openInboxTarget(
  config: PeppolInboxConfig,
  log: Logger,
  health?: OutputHealth,
  shared?: SharedWriting,
): OutputTarget {
  return openOutputTarget(config.target, {
    log,
    at: 'peppolInbox.target',
    shared,
    ...(health ? { health } : {}),
  });
}

export async function startInbound(options: InboundOptions): Promise<Inbound> {
  const { config, clock, log } = options;
  const store = await openInboxStore(options.journal, config.stateDir, clock, { log });
  const stops: (() => unknown)[] = [() => store.close()];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (err) {
        log.error({ err }, 'inbound part failed to stop');
      }
    }
  };
  let lastWebhookAt: number | undefined;
  const outputs: RetainedOutput[] = [];
  try {
    let poller: PeppolPoller | undefined;
    const peppol = options.client.peppol;
    if (config.peppolInbox.enabled && peppol) {
      const target =
        options.target ??
        openInboxTarget(config.peppolInbox, log, options.outputHealth, options.sharedWriting);
      if (!options.target) stops.push(() => target.close());
      outputs.push({ place: 'peppol-inbox', target, retentionMs: config.peppolInbox.target.retention });
      const tmpDir = path.join(config.stateDir, 'inbox-tmp');
      // Left-overs of a crash mid-download: the documents are listed again anyway.
      rmSync(tmpDir, { recursive: true, force: true });
      const p = new PeppolPoller({
        peppol,
        store,
        target,
        tmpDir,
        clock,
        log: log.child({ part: 'peppol-inbox' }),
        overlapMs: config.peppolInbox.overlapMs,
        pageSize: config.peppolInbox.pageSize,
      });
      poller = p;
      stops.push(() => p.stop());
      const quietMs = config.peppolInbox.quietWhileWebhooksMs;
      const plan = cronPlan(config.peppolInbox.schedule);
      // Several agents on one journal: one of them polls at each firing (by the database's clock).
      const claimed = async (): Promise<boolean> => {
        const claim = options.claimTask;
        if (!claim) return true;
        const now = clock.now();
        const next = plan.next(now) ?? now + 60_000;
        try {
          return await claim(PEPPOL_POLL_TASK, Math.max(1, Math.floor((next - now) * POLL_CLAIM_SHARE)));
        } catch {
          return true; // The database down: a second poll only lists again; none would miss documents.
        }
      };
      const pollIfClaimed = () =>
        void claimed().then((ours) => {
          if (ours) void p.poll();
          else log.debug({ part: 'peppol-inbox' }, 'scheduled poll: another agent polls this one');
        });
      const task = (options.scheduler ?? nodeCronScheduler)(config.peppolInbox.schedule, () => {
        if (scheduledPollDue(clock.now(), p.lastPass, lastWebhookAt, quietMs)) pollIfClaimed();
        else log.debug({ part: 'peppol-inbox' }, 'scheduled poll skipped: webhooks are arriving');
      });
      stops.push(() => task.stop());
      // At start always: what a stopped or killed agent left half saved is listed and saved again.
      void p.poll();
      log.info({ target: target.description, schedule: config.peppolInbox.schedule }, 'peppol inbox started');
    }

    let receiver: WebhookReceiver | undefined;
    if (config.webhooks.enabled) {
      const w = config.webhooks;
      const { host, port } = parseListen(w.listen);
      const callbacks: InboundCallbacks = {
        ...options.callbacks,
        onAnyDelivery: () => {
          lastWebhookAt = clock.now();
          options.callbacks?.onAnyDelivery?.();
        },
        // Nothing to record before the answer: every start polls the inbox from its high-water
        // mark, so a document whose delivery was answered and then lost to a kill is found then.
        onPeppolDocument: () => (poller ? () => void poller?.poll() : undefined),
      };
      // Deliveries may have been missed while the agent was down: the follower catches up.
      options.callbacks?.onWebhooksStarting?.();
      const wlog = log.child({ part: 'webhooks' });
      const r = await WebhookReceiver.start({
        host,
        port,
        path: w.path,
        maxBodyBytes: w.maxBodyBytes,
        toleranceMs: w.toleranceMs,
        secrets: new SecretRing(webhookSecretsDir(config.stateDir), w.secrets, wlog),
        seen: (id) => store.webhookSeen(id),
        effect: (delivery, webhookId) => routeDelivery(delivery, callbacks, wlog, webhookId),
        remember: (id, type) => store.rememberWebhook(id, type, WEBHOOK_ID_MEMORY_MS),
        log: wlog,
        ...(options.receiverClock ? { clock: options.receiverClock } : {}),
      });
      receiver = r;
      stops.push(() => r.stop());
    }
    const stats = () => ({
      peppolDocumentsArchived: poller?.savedCount ?? 0,
      webhookDeliveries: { ...(receiver?.counts ?? { accepted: 0, rejected: 0 }) },
    });
    return { store, poller, receiver, outputs, stats, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** How long a sending-event delivery without a job id may take to find its job before its answer. */
export const EVENT_LOOKUP_DEADLINE_MS = 5_000;

/** What the callbacks need of the job follower (structural: this part does not import it). */
export interface NudgeTarget {
  /** Durable: the job's poll due now, in the store. False: a job this agent does not follow. */
  recordNudge(jobId: string): Promise<boolean>;
  /** Polls a recorded job at once (in memory); without a job, wakes the follower. */
  pollNow(jobId?: string): void;
  /** The job of a sending event within `deadlineMs` (rejects past it); undefined: not this agent's. */
  jobOfSendingEvent(sendingEventId: string, deadlineMs: number): Promise<string | undefined>;
  /** Durable: every unfinished job is to be polled soon. */
  recordPollUnfinished(): Promise<void>;
  /** Webhooks are on at this start: every unfinished job is polled within the first minute. */
  catchUpAfterStart(): void;
  webhooksActive(at?: number): void;
}

/** The follower's webhook callbacks, and what the inbound part tells it as the receiver starts. */
export interface FollowerCallbacks extends Omit<InboundCallbacks, 'onPeppolDocument'> {
  onWebhooksStarting?(): void;
}

/**
 * Webhook callbacks that make the follower look now; none when jobs are not followed. Each records
 * its effect in the returns store before the delivery is answered; the poll runs after the answer.
 */
export function followerCallbacks(
  follower: NudgeTarget | undefined,
  log: Logger,
  options: { eventLookupDeadlineMs?: number } = {},
): FollowerCallbacks {
  if (!follower) return {};
  const deadlineMs = options.eventLookupDeadlineMs ?? EVENT_LOOKUP_DEADLINE_MS;
  const job = async (jobId: string): Promise<AfterAnswer | undefined> =>
    (await follower.recordNudge(jobId)) ? () => follower.pollNow(jobId) : undefined;
  return {
    onJobEvent: job,
    // The delivery names the job: no GET of the event is needed to find it, and a job this agent
    // does not follow (another agent's, on the same subscription) costs no call at all.
    onSendingEvent: async (sendingEventId, jobId) => {
      if (jobId) return job(jobId);
      let found: string | undefined;
      try {
        found = await follower.jobOfSendingEvent(sendingEventId, deadlineMs);
      } catch (err) {
        // Not found in time (the service slow or failing): nothing may be lost, so every
        // unfinished job is polled soon instead, as the store now records.
        log.warn(
          { sendingEventId, err },
          'the job of a sending event was not found in time: every unfinished job is polled soon',
        );
        await follower.recordPollUnfinished();
        return () => follower.pollNow();
      }
      if (found === undefined) {
        log.info({ sendingEventId }, 'webhook for a sending event the service does not show this agent');
        return undefined;
      }
      return job(found);
    },
    onAnyDelivery: () => follower.webhooksActive(),
    onWebhooksStarting: () => follower.catchUpAfterStart(),
  };
}
