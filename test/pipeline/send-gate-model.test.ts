/**
 * A model-based test of exactly once for payload-word rows, whose create is the sending itself:
 * fast-check generates sequences of row steps, each meeting a fault (the answer lost, an error of
 * ours before or after the call, a crash right after the job was recorded) and crashes (the
 * process's memory gone, the journal reopened from where it is kept), once per journal backend.
 * After every command no row
 * may have more than one job at the service; at the end, driven without faults, every row has
 * exactly one job and is done. The seed is printed by fast-check on failure (replay with it).
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { API_ERROR_CODES, ApiError } from '../../src/api/index.js';
import { ManualClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/core/logger.js';
import type { Job, PayloadJobRequest } from '../../src/domain/wire.js';
import { isFinal, type JournalItem, type JournalStore } from '../../src/journal/index.js';
import { FreshIntents } from '../../src/pipeline/fresh-intents.js';
import { sharedInspector } from '../../src/pipeline/isolate/inspector.js';
import { createRow } from '../../src/pipeline/payload-word.js';
import type { FolderRuntime, PipelineJobs, StepContext } from '../../src/pipeline/types.js';
import {
  describeEachBackend,
  type JournalBackend,
  type JournalUnderTest,
} from '../journal/support/backends.js';

const ROWS = 3;
type Fault = 'none' | 'answer-lost' | 'error-before-call' | 'error-after-call' | 'crash-after-recorded';

/** The service as far as the gate sees it: jobs by name, a create that may meet a fault. */
class FakeService {
  readonly jobs: Job[] = [];
  fault: Fault = 'none';

  api(): PipelineJobs {
    const create = async (request: PayloadJobRequest): Promise<{ id: string }> => {
      if (this.fault === 'error-before-call') throw new Error('a bug before the call');
      const job = { id: `job_${this.jobs.length + 1}`, name: request.jobName ?? '' } as Job;
      this.jobs.push(job);
      if (this.fault === 'answer-lost') {
        throw new ApiError(API_ERROR_CODES.network, 'connection reset', {
          method: 'POST',
          route: '/jobs/payload-word',
        });
      }
      if (this.fault === 'error-after-call') throw new Error('a bug after the call');
      return { id: job.id };
    };
    const jobs = this.jobs;
    return {
      createPayloadWord: create,
      async *iterate() {
        yield* [...jobs];
      },
    } as unknown as PipelineJobs;
  }
}

class World {
  readonly service = new FakeService();
  /** Set: the next 'row job created' line ends the process (the log line sits between the two moves). */
  crashArmed = false;
  intents = new FreshIntents();

  private constructor(
    readonly clock: ManualClock,
    private readonly under: JournalUnderTest,
    public journal: JournalStore,
    readonly fileId: number,
  ) {}

  static async make(backend: JournalBackend): Promise<World> {
    const clock = new ManualClock();
    const under = await backend.open({ clock, quiet: true });
    const journal = under.journal;
    const claim = await journal.recordClaim({
      folder: 'letters',
      sourcePath: '/in/letters.csv',
      claimedPath: '/in/.processing/letters.csv',
      fileName: 'letters.csv',
      size: 10,
      mtimeMs: 1,
      sha256: 'ab'.repeat(32),
      workflowId: 'wf_payload_word_email',
      mode: 'payload-word',
    });
    await journal.transition(claim.item.id, 'validated');
    await journal.addRows(
      claim.item.id,
      Array.from({ length: ROWS }, (_, rowIndex) => ({ rowIndex })),
    );
    return new World(clock, under, journal, claim.item.id);
  }

  /** Memory gone, the journal read again from where it is kept. */
  async crash(): Promise<void> {
    this.journal = await this.under.reopen();
    this.intents = new FreshIntents();
  }

  rows(): Promise<JournalItem[]> {
    return this.journal.rowsOf(this.fileId);
  }

  async step(rowIndex: number, fault: Fault): Promise<void> {
    const row = (await this.rows())[rowIndex]!;
    if (isFinal(row.state)) return;
    this.service.fault = fault === 'crash-after-recorded' ? 'none' : fault;
    this.crashArmed = fault === 'crash-after-recorded';
    const lines = {
      write: (line: string) => {
        if (this.crashArmed && line.includes('"msg":"row job created"')) {
          this.crashArmed = false;
          throw new Error('crashed');
        }
      },
    };
    const ctx: StepContext = {
      journal: this.journal,
      jobs: this.service.api(),
      clock: this.clock,
      log: createLogger({ level: 'info', destination: lines }),
      maxFileBytes: 1 << 20,
      uploadMarginMs: 0,
      lookupMarginMs: 60_000,
      signal: new AbortController().signal,
      intents: this.intents,
      // A row's create parses nothing; workers start only on a first inspection.
      inspector: sharedInspector(),
    };
    const runtime = { config: {} } as FolderRuntime;
    const request = { workflowId: 'wf_payload_word_email', payload: {} } as unknown as PayloadJobRequest;
    try {
      await createRow(ctx, runtime, row, request);
    } catch (err) {
      if ((err as Error).message === 'crashed') await this.crash();
    }
  }

  async jobsPerRow(): Promise<number[]> {
    return (await this.rows()).map((row) => this.service.jobs.filter((j) => j.name === row.jobName).length);
  }

  close(): Promise<void> {
    return this.under.cleanup();
  }
}

const command = fc.oneof(
  fc.record({
    kind: fc.constant('step' as const),
    row: fc.integer({ min: 0, max: ROWS - 1 }),
    fault: fc.constantFrom<Fault>(
      'none',
      'answer-lost',
      'error-before-call',
      'error-after-call',
      'crash-after-recorded',
    ),
  }),
  fc.record({ kind: fc.constant('crash' as const) }),
);

describeEachBackend('the send gate, model-based (payload-word rows)', (backend) => {
  it('never makes a second job for a row, whatever faults and crashes come, and ends with one job per row', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 30 }), async (commands) => {
        const world = await World.make(backend);
        try {
          for (const c of commands) {
            if (c.kind === 'crash') await world.crash();
            else await world.step(c.row, c.fault);
            for (const n of await world.jobsPerRow()) expect(n).toBeLessThanOrEqual(1);
          }
          // Then the service behaves: a few rounds bring every row to done.
          for (let round = 0; round < 3; round++) {
            for (let row = 0; row < ROWS; row++) await world.step(row, 'none');
          }
          expect((await world.rows()).map((r) => r.state)).toEqual(Array(ROWS).fill('done'));
          expect(await world.jobsPerRow()).toEqual(Array(ROWS).fill(1));
        } finally {
          await world.close();
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
