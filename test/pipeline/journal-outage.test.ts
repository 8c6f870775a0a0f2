/**
 * The pipeline's answer to a journal database that does not answer: intake paused, the work that
 * failed kept, one warning, an error once it lasts, and everything resumed by itself when a probe
 * gets an answer. The journal is a fake that fails on command (fault injection); timers are fake.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DocexError } from '../../src/core/errors.js';
import { JournalOutage } from '../../src/pipeline/journal-outage.js';
import { captureLogger } from '../api/support/log-capture.js';

const unavailable = () => new DocexError('DOCEX_JOURNAL_UNAVAILABLE', 'connection refused');

function makeOutage() {
  const clock = new ManualClock();
  let answers = false;
  const journal = {
    location: 'postgres://docex@db:5432/docex',
    get: async () => {
      if (!answers) throw unavailable();
      return undefined;
    },
  };
  const changes: boolean[] = [];
  const { log, lines } = captureLogger('info');
  const outage = new JournalOutage({
    journal,
    clock,
    log,
    onChange: (down) => changes.push(down),
    probeMs: 100,
    maxProbeMs: 400,
    errorAfterMs: 1_000,
  });
  const probe = async (ms: number) => {
    clock.advance(ms);
    await vi.advanceTimersByTimeAsync(ms);
  };
  return { outage, changes, lines, probe, answer: () => (answers = true) };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('JournalOutage', () => {
  it('leaves any other error to the caller', () => {
    const { outage, changes } = makeOutage();
    expect(outage.absorb(new DocexError('DOCEX_API_503', 'busy'), () => {})).toBe(false);
    expect(outage.absorb(new Error('a bug'), () => {})).toBe(false);
    expect(outage.down).toBe(false);
    expect(changes).toEqual([]);
  });

  it('pauses intake once with one warning, however many steps fail, and keeps each step', () => {
    const { outage, changes, lines } = makeOutage();
    expect(outage.absorb(unavailable(), () => {})).toBe(true);
    expect(outage.absorb(unavailable(), () => {})).toBe(true);
    expect(outage.down).toBe(true);
    expect(changes).toEqual([true]);
    const warnings = lines().filter((l) => l['level'] === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({ journal: 'postgres://docex@db:5432/docex', reason: 'connection refused' }),
    ]);
  });

  it('logs one error once the outage lasts past its threshold, and probes less often as it lasts', async () => {
    const { outage, lines, probe } = makeOutage();
    outage.absorb(unavailable(), () => {});
    await probe(100); // probe 1 at 100 ms
    await probe(200); // probe 2 at 300 ms
    expect(lines().filter((l) => l['level'] === 'error')).toEqual([]);
    await probe(400); // probe 3 at 700 ms
    await probe(400); // probe 4 at 1,100 ms: past the threshold
    await probe(400);
    const errors = lines().filter((l) => l['level'] === 'error');
    expect(errors).toEqual([expect.objectContaining({ code: 'DOCEX_JOURNAL_UNAVAILABLE', downMs: 1_100 })]);
    outage.stop();
  });

  it('resumes intake and runs every kept step once when a probe is answered', async () => {
    const { outage, changes, lines, probe, answer } = makeOutage();
    const ran: string[] = [];
    outage.absorb(unavailable(), () => ran.push('accept a.pdf'));
    outage.absorb(unavailable(), () => ran.push('resume item 7'));
    await probe(100);
    expect(ran).toEqual([]);
    answer();
    await probe(200);
    expect(ran).toEqual(['accept a.pdf', 'resume item 7']);
    expect(outage.down).toBe(false);
    expect(changes).toEqual([true, false]);
    expect(lines().at(-1)).toMatchObject({ msg: 'journal answers again: intake resumed', waiting: 2 });
    await probe(10_000);
    expect(ran).toHaveLength(2);
  });

  it('drops kept steps and probes no more once stopped', async () => {
    const { outage, probe, answer } = makeOutage();
    const ran: string[] = [];
    outage.absorb(unavailable(), () => ran.push('accept'));
    outage.stop();
    answer();
    await probe(10_000);
    expect(ran).toEqual([]);
  });
});
