/**
 * Prometheus metrics of one agent, in a registry of its own (no prom-client global: tests run
 * several agents in one process). Counts are pulled at scrape time from where they are kept (the
 * journal, the pipeline, the certificate file), so the pipeline code stays free of metrics calls;
 * only what is nowhere recorded (request durations, token fetches, upload attempts) is pushed,
 * through the API client's observer.
 */
import { X509Certificate } from 'node:crypto';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { LeaseCounts } from '../agent/leases.js';
import type { ApiObserver } from '../api/index.js';
import type { Clock } from '../core/clock.js';
import type { PendingUpload, WaitingFiles } from '../journal/index.js';
import type { JournalCounts } from './journal-reader.js';

/** Where the pulled values come from; attached once the agent runs (the observer exists before). */
export interface MetricsSources {
  clock: Clock;
  journal?: () => Promise<JournalCounts>;
  pendingUploads?: () => Promise<PendingUpload[]>;
  /** Files queued or in flight in the pipeline. */
  queueDepth?: () => number;
  /** PEM of the client certificate (mTLS), for its expiry. */
  certificatePem?: () => string | undefined;
  /** Return-path counts (proofs and Peppol documents archived, webhook deliveries), when present. */
  returns?: () => ReturnsCounts | Promise<ReturnsCounts>;
  /** Files claimed and not finished, by folder and state. */
  waiting?: () => Promise<WaitingFiles[]>;
  /** Configured folders the agent did not start. */
  stoppedFolders?: () => number;
  /** Each running local folder and how many files in it the agent cannot read, stat or move. */
  unreadableFiles?: () => { folder: string; count: number }[];
  /** Files held until their folder's send window opens, by folder with a window (0: none). */
  heldForWindow?: () => { folder: string; count: number }[];
  /** Failed writes to output targets since start, by output. */
  outputFailures?: () => Record<string, number>;
  /** Bytes of the journal file and its WAL. */
  journalBytes?: () => number | undefined;
  /** Files removed by retention since start, by folder and place (archive, error; outputs: folder empty). */
  retentionRemoved?: () => { folder: string; place: string; files: number }[];
  /** Agents alive on the journal (heartbeats, by the database's clock); 1 on a SQLite journal. */
  agentsAlive?: () => Promise<number>;
  /** Leases since start (several agents on one journal). */
  leases?: () => LeaseCounts;
  /** Claims of the tasks run once across the agents since start, by task. */
  clusterTasks?: () => ReadonlyMap<string, { ran: number; left: number }>;
  /** The pace of the service host (api/host-pace.ts). */
  pace?: () => PaceCounts;
}

/** The pace of the service host now: calls it allows in flight, and those in flight. */
export interface PaceCounts {
  concurrency: number;
  inFlight: number;
}

export interface ReturnsCounts {
  proofsArchived?: number;
  peppolDocumentsArchived?: number;
  webhookDeliveries?: { accepted: number; rejected: number };
  /** Calls the follower may have in flight now (its pacing's limit). */
  followConcurrency?: number;
}

const DAY_MS = 86_400_000;
export const EVENT_LOOP_SAMPLE_MS = 1000;

/** The expiry of a PEM certificate in epoch ms, or undefined when it cannot be read. */
export function certificateExpiry(pem: string): number | undefined {
  try {
    const expiry = Date.parse(new X509Certificate(pem).validTo);
    return Number.isNaN(expiry) ? undefined : expiry;
  } catch {
    return undefined;
  }
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly apiObserver: ApiObserver;
  private sources: MetricsSources | undefined;

  constructor(options: { processMetrics?: boolean; version?: string } = {}) {
    const registers = [this.registry];
    const sourcesNow = () => this.sources;
    const pull = async (fn: (s: MetricsSources) => void | Promise<void>) => {
      const s = this.sources;
      if (s) await fn(s);
    };

    // A counter whose totals are kept elsewhere and read at scrape time. The registry collects
    // metrics side by side; each awaits the same read (the journal reader shares one read among
    // concurrent callers) and fills only itself.
    const pulledCounter =
      <T>(source: (s: MetricsSources) => (() => T | Promise<T>) | undefined) =>
      (name: string, help: string, labelNames: string[], fill: (counter: Counter, counts: T) => void) => {
        const counter: Counter = new Counter({
          name,
          help,
          labelNames,
          registers,
          collect: async () => {
            const read = this.sources ? source(this.sources) : undefined;
            if (!read) return;
            const counts = await read();
            counter.reset();
            fill(counter, counts);
          },
        });
      };

    // Counters from the journal: totals since the journal was created (a restart keeps them).
    const fromJournal = pulledCounter((s) => s.journal);
    const each = (counter: Counter, byFolder: Record<string, number>) => {
      for (const [folder, n] of Object.entries(byFolder)) counter.inc({ folder }, n);
    };
    fromJournal('docex_files_taken_total', 'Files claimed from a drop folder.', ['folder'], (c, counts) =>
      each(c, counts.taken),
    );
    fromJournal(
      'docex_files_submitted_total',
      'Files the service has: uploaded, or (payload files) all their payload jobs finished.',
      ['folder'],
      (c, counts) => each(c, counts.submitted),
    );
    fromJournal(
      'docex_files_rejected_total',
      'Files moved to the error folder, by DOCEX_ code.',
      ['folder', 'reason'],
      (c, counts) => {
        for (const [folder, reasons] of Object.entries(counts.rejected)) {
          for (const [reason, n] of Object.entries(reasons)) c.inc({ folder, reason }, n);
        }
      },
    );
    fromJournal(
      'docex_jobs_created_total',
      'Jobs created on the service (a job recreated after its upload window counts again).',
      ['folder'],
      (c, counts) => each(c, counts.jobsCreated),
    );

    const uploadBytes = new Counter({
      name: 'docex_upload_bytes_total',
      help: 'Bytes sent to pre-signed upload URLs (every attempt) since the agent started.',
      registers,
    });
    const uploadSeconds = new Histogram({
      name: 'docex_upload_duration_seconds',
      help: 'Duration of upload attempts to pre-signed URLs, by HTTP status (error: no answer).',
      labelNames: ['status'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    const requestSeconds = new Histogram({
      name: 'docex_api_request_duration_seconds',
      help: 'Duration of service requests, by method, route template and HTTP status (error: no answer).',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const tokenRefreshes = new Counter({
      name: 'docex_token_refreshes_total',
      help: 'OAuth2 tokens fetched from the token host, by result.',
      labelNames: ['result'],
      registers,
    });
    const paceWaitSeconds = new Histogram({
      name: 'docex_api_pace_wait_seconds',
      help: "Time a call to the service waited for its turn in the host's pace (a Retry-After, a rate, a free place), by caller (intake, returns); calls that did not wait are not counted.",
      labelNames: ['caller'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    const paceBackoffs = new Counter({
      name: 'docex_api_backoffs_total',
      help: 'Answers 429 and 503 the service gave, by caller and status: each makes every call to the host back off (halved concurrency, a Retry-After waited out).',
      labelNames: ['caller', 'status'],
      registers,
    });
    this.apiObserver = {
      paceWait: (e) => paceWaitSeconds.observe({ caller: e.caller }, e.seconds),
      paceBackoff: (e) => paceBackoffs.inc({ caller: e.caller, status: String(e.status) }),
      request: (e) =>
        requestSeconds.observe({ method: e.method, route: e.route, status: String(e.status) }, e.seconds),
      tokenRefresh: (e) => tokenRefreshes.inc({ result: e.ok ? 'ok' : 'error' }),
      upload: (e) => {
        uploadBytes.inc(e.bytes);
        uploadSeconds.observe({ status: String(e.status) }, e.seconds);
      },
    };

    new Gauge({
      name: 'docex_queue_depth',
      help: 'Files queued or in flight in the pipeline, all folders.',
      registers,
      collect() {
        pull((s) => {
          if (s.queueDepth) this.set(s.queueDepth());
        });
      },
    });
    new Gauge({
      name: 'docex_upload_window_remaining_seconds',
      help: 'Time left on the oldest pending upload window, per folder (absent: none pending).',
      labelNames: ['folder'],
      registers,
      async collect() {
        this.reset();
        await pull(async (s) => {
          const now = s.clock.now();
          const soonest = new Map<string, number>();
          for (const p of (await s.pendingUploads?.()) ?? []) {
            soonest.set(p.folder, Math.min(soonest.get(p.folder) ?? Infinity, p.deadline));
          }
          for (const [folder, deadline] of soonest) this.set({ folder }, (deadline - now) / 1000);
        });
      },
    });
    new Gauge({
      name: 'docex_client_certificate_expiry_days',
      help: 'Days until the mTLS client certificate expires (negative: expired).',
      registers,
      collect() {
        // No sample at all (not 0) while no certificate can be read: 0 would mean "expires today".
        this.reset();
        this.remove();
        pull((s) => {
          const pem = s.certificatePem?.();
          const expiry = pem ? certificateExpiry(pem) : undefined;
          if (expiry !== undefined) this.set((expiry - s.clock.now()) / DAY_MS);
        });
      },
    });

    // Return-path counts, when the return path reports them (absent otherwise).
    const fromReturns = pulledCounter((s) => s.returns);
    fromReturns(
      'docex_proofs_archived_total',
      'Proofs of delivery written to the proofs output.',
      [],
      (c, r) => {
        if (r.proofsArchived !== undefined) c.inc(r.proofsArchived);
      },
    );
    fromReturns(
      'docex_peppol_documents_archived_total',
      'Incoming Peppol documents written to the inbox output.',
      [],
      (c, r) => {
        if (r.peppolDocumentsArchived !== undefined) c.inc(r.peppolDocumentsArchived);
      },
    );
    fromReturns(
      'docex_webhook_deliveries_total',
      'Webhook deliveries received, by result (accepted, rejected).',
      ['result'],
      (c, r) => {
        if (!r.webhookDeliveries) return;
        c.inc({ result: 'accepted' }, r.webhookDeliveries.accepted);
        c.inc({ result: 'rejected' }, r.webhookDeliveries.rejected);
      },
    );

    new Gauge({
      name: 'docex_follow_concurrency',
      help: "Calls the return path's follower may have in flight now: grows while the service answers well, halves on 429/503 (absent: return path off).",
      registers,
      async collect() {
        this.reset();
        this.remove();
        const read = sourcesNow()?.returns;
        const n = read ? (await read()).followConcurrency : undefined;
        if (n !== undefined) this.set(n);
      },
    });
    new Gauge({
      name: 'docex_api_concurrency',
      help: "Calls to the service the host's pace allows in flight now, the intake and the return path together: grows while the service answers well, halves on 429/503.",
      registers,
      collect() {
        pull((s) => {
          if (s.pace) this.set(s.pace().concurrency);
        });
      },
    });
    new Gauge({
      name: 'docex_api_calls_in_flight',
      help: "Places of the host's pace taken now: the intake's calls in flight and the return path's tasks.",
      registers,
      collect() {
        pull((s) => {
          if (s.pace) this.set(s.pace().inFlight);
        });
      },
    });
    new Gauge({
      name: 'docex_files_waiting',
      help: 'Files claimed and not finished (done or rejected) yet, by folder and journal state.',
      labelNames: ['folder', 'state'],
      registers,
      async collect() {
        this.reset();
        await pull(async (s) => {
          for (const w of (await s.waiting?.()) ?? [])
            this.set({ folder: w.folder, state: w.state }, w.count);
        });
      },
    });
    new Gauge({
      name: 'docex_oldest_waiting_file_age_seconds',
      help: 'Age of the oldest file claimed and not finished, per folder (absent: none waiting).',
      labelNames: ['folder'],
      registers,
      async collect() {
        this.reset();
        await pull(async (s) => {
          const oldest = new Map<string, number>();
          for (const w of (await s.waiting?.()) ?? []) {
            oldest.set(w.folder, Math.min(oldest.get(w.folder) ?? Infinity, w.oldestAt));
          }
          const now = s.clock.now();
          for (const [folder, at] of oldest) this.set({ folder }, Math.max(0, (now - at) / 1000));
        });
      },
    });
    new Gauge({
      name: 'docex_folders_stopped',
      help: 'Configured folders the agent did not start or stopped (drop folder missing or not writable, a link where the agent writes, unknown workflow id, managed company not allowed).',
      registers,
      collect() {
        pull((s) => this.set(s.stoppedFolders?.() ?? 0));
      },
    });
    new Gauge({
      name: 'docex_files_unreadable',
      help: 'Complete files in a drop folder that the agent cannot read, stat or move (permissions: the ERP’s umask or group), per running local folder; they wait there untouched until fixed.',
      labelNames: ['folder'],
      registers,
      collect() {
        this.reset();
        pull((s) => {
          for (const { folder, count } of s.unreadableFiles?.() ?? []) this.set({ folder }, count);
        });
      },
    });
    new Gauge({
      name: 'docex_files_held_for_window',
      help: 'Files taken and checked that wait for their folder’s send window (window) to open before their job is created, per folder with a window; a closed window is not a fault.',
      labelNames: ['folder'],
      registers,
      collect() {
        this.reset();
        pull((s) => {
          for (const { folder, count } of s.heldForWindow?.() ?? []) this.set({ folder }, count);
        });
      },
    });
    const outputFailures = new Counter({
      name: 'docex_output_write_failures_total',
      help: 'Failed writes to output targets (statuses, proofs, Peppol inbox) since the agent started.',
      labelNames: ['output'],
      registers,
      collect() {
        pull((s) => {
          outputFailures.reset();
          for (const [output, n] of Object.entries(s.outputFailures?.() ?? {}))
            outputFailures.inc({ output }, n);
        });
      },
    });
    const retentionRemoved = new Counter({
      name: 'docex_retention_removed_total',
      help: 'Files removed by retention since the agent started: archive and error folders (by folder), outputs (place statuses, proofs, peppol-inbox; folder empty).',
      labelNames: ['folder', 'place'],
      registers,
      collect() {
        pull((s) => {
          retentionRemoved.reset();
          for (const r of s.retentionRemoved?.() ?? [])
            retentionRemoved.inc({ folder: r.folder, place: r.place }, r.files);
        });
      },
    });
    new Gauge({
      name: 'docex_journal_size_bytes',
      help: 'Bytes of the journal (journal.sqlite and its WAL).',
      registers,
      collect() {
        this.reset();
        this.remove();
        pull((s) => {
          const bytes = s.journalBytes?.();
          if (bytes !== undefined) this.set(bytes);
        });
      },
    });
    new Gauge({
      name: 'docex_agents_alive',
      help: 'Agents sharing the journal whose heartbeat is fresh (cluster.deadAfterMs, by the database’s clock); 1 on a SQLite journal (absent: the database did not answer).',
      registers,
      async collect() {
        this.reset();
        this.remove();
        const read = sourcesNow()?.agentsAlive;
        if (!read) return;
        try {
          this.set(await read());
        } catch {
          // The journal's outage shows in /readyz and its own metrics; no number is better than a wrong one.
        }
      },
    });
    const fromLeases = pulledCounter((s) => s.leases);
    fromLeases(
      'docex_files_taken_over_total',
      'Files this agent took over from another agent (or from its own earlier start) since it started: their lease had run out (an SFTP file: with a copy it downloaded again).',
      [],
      (c, counts) => c.inc(counts.takenOver),
    );
    fromLeases(
      'docex_leases_lost_total',
      'Files this agent held and found taken over by another agent since it started (it stopped touching them).',
      [],
      (c, counts) => c.inc(counts.lost),
    );
    fromLeases(
      'docex_lease_renewals_failed_total',
      'Rounds of lease renewal that failed (the journal’s database did not answer) since the agent started.',
      [],
      (c, counts) => c.inc(counts.renewalsFailed),
    );
    pulledCounter((s) => s.clusterTasks)(
      'docex_cluster_tasks_total',
      'Claims of the tasks run once across the agents (follow sweep, Peppol poll, daily CSV, retention) since start: `ran` here, or `left` to another agent. Summed over the agents, each period has one `ran`.',
      ['task', 'outcome'],
      (c, tasks) => {
        for (const [task, { ran, left }] of tasks) {
          c.inc({ task, outcome: 'ran' }, ran);
          c.inc({ task, outcome: 'left' }, left);
        }
      },
    );
    const buildInfo = new Gauge({
      name: 'docex_build_info',
      help: 'Always 1; the agent version and Node.js version as labels.',
      labelNames: ['version', 'node'],
      registers,
    });
    buildInfo.set({ version: options.version ?? 'unknown', node: process.version }, 1);

    // Event-loop delay sampled once a second, not every 10 ms (prom-client's default): the
    // sampling timer alone woke an idle agent 100 times a second.
    if (options.processMetrics ?? true) {
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    }
  }

  /** Where pulled values come from from now on. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
