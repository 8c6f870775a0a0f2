/** What pg-restart and pg-cut share: when to strike (by progress), and what the agent showed of the outage. */
import { request } from 'undici';
import { JOURNAL_BACK, JOURNAL_DOWN, JOURNAL_IDLE_LOST } from '../processes.js';
import { sleep } from '../scenario.js';
import type { World } from '../world.js';

/**
 * The sets arrive in `faults + 1` batches, and the i-th fault strikes once 20–80 % of the i-th
 * batch is placed: every fault lands mid-run with work in flight and more waiting (a moment chosen
 * by progress, not by time, holds on a slow machine too). Answers the set count of each moment.
 */
export function batchedMoments(
  random: () => number,
  faults: number,
  sets: number,
): { batch: number; moments: number[] } {
  const batch = Math.max(1, Math.ceil(sets / (faults + 1)));
  const moments = Array.from({ length: faults }, (_, i) =>
    Math.min(sets, i * batch + Math.max(1, Math.round(batch * (0.2 + random() * 0.6)))),
  );
  return { batch, moments };
}

/** Resolves once `sets` sets are placed (the world drops sets that go one at a time meanwhile). */
export async function placedSets(world: World, sets: number): Promise<void> {
  await world.waitPlaced(120_000, sets);
}

/** Resolves on the first of the agent's next log lines with this message, or after `ms` (false). */
export function nextLine(world: World, msg: string, ms: number): Promise<boolean> {
  const agent = world.agents.at(-1);
  if (!agent) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      agent.onMessage = undefined;
      resolve(false);
    }, ms);
    agent.onMessage = (m) => {
      if (m !== msg) return;
      clearTimeout(timer);
      agent.onMessage = undefined;
      resolve(true);
    };
  });
}

/**
 * Polls the agent's /readyz until it answers not ready with the journal named (true), or `ms` pass
 * (false). Its body is kept for the report.
 */
export async function readyzNamesJournal(
  world: World,
  ms: number,
): Promise<{ named: boolean; body: string }> {
  const agent = world.agents.at(-1);
  if (!agent) return { named: false, body: '' };
  const base = await Promise.race([agent.ops, sleep(ms).then(() => undefined)]);
  if (!base) return { named: false, body: 'no ops address logged' };
  const deadline = Date.now() + ms;
  let body = '';
  while (Date.now() < deadline) {
    try {
      const res = await request(`${base}/readyz`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      body = await res.body.text();
      if (res.statusCode !== 200 && /journal/i.test(body)) return { named: true, body };
    } catch (err) {
      body = String(err);
    }
    await sleep(100);
  }
  return { named: false, body };
}

/** The outage lines the world's agents logged. */
export function outageCounts(world: World): { down: number; back: number; idleLost: number } {
  const sum = (msg: string) => world.agents.reduce((n, a) => n + (a.seen.get(msg) ?? 0), 0);
  return { down: sum(JOURNAL_DOWN), back: sum(JOURNAL_BACK), idleLost: sum(JOURNAL_IDLE_LOST) };
}
