/**
 * The journal backends the conformance suite (test/journal/conformance/) runs against: every test
 * there runs once per backend, its name prefixed with the backend (`[sqlite] …`, `[postgres] …`).
 *
 * - sqlite: a fresh journal file in a temp folder (support/journal-harness.ts).
 * - postgres: a fresh, empty database per open() on the test run's shared server, from the
 *   PostgreSQL test harness (test/support/postgres.ts: `testDatabase()`, `describePostgres`, its
 *   globalSetup in vitest.config.ts): skipped without a server, failing under
 *   DOCEX_REQUIRE_POSTGRES=1.
 *
 * Use from a test file:
 *
 *   describeEachBackend('claims', (backend) => {
 *     let t: JournalUnderTest;
 *     beforeEach(async () => { t = await backend.open(); });
 *     afterEach(() => t.cleanup());
 *     it('…', async () => { await t.journal.recordClaim(…); });
 *   });
 *
 * A model test that reopens the journal (test/pipeline/send-gate-model.test.ts) can keep its own
 * clock and "crash" by reopening:
 *
 *   describeEachBackend('send gate model', (backend) => {
 *     it('…', async () => {
 *       await fc.assert(fc.asyncProperty(commands, async (cmds) => {
 *         const clock = new ManualClock();
 *         const t = await backend.open({ clock, quiet: true });
 *         try {
 *           let journal = t.journal;         // hand `journal` to the StepContext
 *           …
 *           journal = await t.reopen();      // memory gone: closes every store, opens a new one
 *         } finally {
 *           await t.cleanup();
 *         }
 *       }));
 *     });
 *   });
 *
 * (A fresh PostgreSQL database per property run costs ~0.1 s; with many runs, open once per `it`
 * and reset through the journal's own API instead.) `journalBackends()` answers the same list for
 * a hand-written loop.
 */
import { describe } from 'vitest';
import { ManualClock } from '../../../src/core/clock.js';
import { type Logger, silentLogger } from '../../../src/core/logger.js';
import type { JournalLocation } from '../../../src/journal/location.js';
import { openJournal, openJournalReader } from '../../../src/journal/open.js';
import type { JournalReader, JournalStore } from '../../../src/journal/store.js';
import { describePostgres, testDatabase } from '../../support/postgres.js';
import { capturingLogger, journalHarness } from './journal-harness.js';

export type BackendName = 'sqlite' | 'postgres';

export interface OpenOptions {
  /** The journal's clock (default: a new ManualClock). */
  clock?: ManualClock;
  /** JournalOptions.scrubDelayMs (SQLite's WAL scrub; other backends ignore it). */
  scrubDelayMs?: number;
  /** A silent logger instead of the capturing one (logText() then answers ''). */
  quiet?: boolean;
}

/** One fresh, empty journal of a backend, and what a test does with it. */
export interface JournalUnderTest {
  readonly backend: BackendName;
  /** Where it is, as the agent's configuration would say. */
  readonly location: JournalLocation;
  readonly clock: ManualClock;
  readonly log: Logger;
  /** The newest store: the one open() made, or the last reopen() answered. */
  readonly journal: JournalStore;
  /** Every line the stores logged so far. */
  logText(): string;
  /** Closes every store opened so far, then opens a new one on the same journal (a restart). */
  reopen(): Promise<JournalStore>;
  /** Another store on the same journal beside the open ones (a second agent, or a restart after a crash). */
  another(): Promise<JournalStore>;
  /** A reader (openJournalReader) on the journal. */
  reader(): Promise<JournalReader>;
  /** Closes every store and reader, removes what the backend made (temp folder). */
  cleanup(): Promise<void>;
}

export interface JournalBackend {
  readonly name: BackendName;
  open(options?: OpenOptions): Promise<JournalUnderTest>;
}

async function underTest(
  backend: BackendName,
  location: JournalLocation,
  options: OpenOptions,
  removeRest: () => Promise<void>,
): Promise<JournalUnderTest> {
  const clock = options.clock ?? new ManualClock();
  const capture = options.quiet ? { log: silentLogger(), logText: () => '' } : capturingLogger();
  const stores: JournalStore[] = [];
  const readers: JournalReader[] = [];
  let current: JournalStore | undefined;
  const closeAll = async (list: { close(): Promise<void> }[]) => {
    for (const one of list.splice(0)) await one.close();
  };
  const openStore = async () => {
    const store = await openJournal(location, {
      clock,
      log: capture.log,
      ...(options.scrubDelayMs === undefined ? {} : { scrubDelayMs: options.scrubDelayMs }),
    });
    stores.push(store);
    current = store;
    return store;
  };
  await openStore().catch(async (err: unknown) => {
    await removeRest();
    throw err;
  });
  return {
    backend,
    location,
    clock,
    log: capture.log,
    get journal() {
      if (!current) throw new Error('no journal open');
      return current;
    },
    logText: capture.logText,
    async reopen() {
      await closeAll(stores);
      return openStore();
    },
    another: openStore,
    async reader() {
      const reader = await openJournalReader(location, { busyTimeoutMs: 1000 });
      readers.push(reader);
      return reader;
    },
    async cleanup() {
      try {
        await closeAll(readers);
        await closeAll(stores);
      } finally {
        await removeRest();
      }
    },
  };
}

const sqlite: JournalBackend = {
  name: 'sqlite',
  async open(options = {}) {
    const h = journalHarness();
    return underTest('sqlite', h.location, options, () => h.cleanup());
  },
};

const postgres: JournalBackend = {
  name: 'postgres',
  async open(options = {}) {
    const url = await testDatabase();
    const location: JournalLocation = {
      kind: 'postgres',
      connection: { url, poolSize: 4, timeoutMs: 10_000 },
    };
    // The database stays on the run's server, which the harness removes at the end of the run.
    return underTest('postgres', location, options, async () => undefined);
  },
};

/** Every backend. */
export function journalBackends(): readonly JournalBackend[] {
  return [sqlite, postgres];
}

/**
 * `describe(`[backend] title`)` once per backend. A backend missing here is a skipped suite whose
 * name says why; PostgreSQL without a server follows the harness (skipped, or failing under
 * DOCEX_REQUIRE_POSTGRES=1).
 */
export function describeEachBackend(title: string, body: (backend: JournalBackend) => void): void {
  for (const backend of journalBackends()) {
    const name = `[${backend.name}] ${title}`;
    if (backend.name === 'postgres') {
      describePostgres(name, () => body(backend));
    } else {
      describe(name, () => body(backend));
    }
  }
}
