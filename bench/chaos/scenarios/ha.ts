/**
 * Several agents on one PostgreSQL journal and one drop folder (PostgreSQL only), with leases short
 * enough for a run (HA_CLUSTER: 3 s, renewed every second), on a local folder or (ha-sftp-kill,
 * ha-sftp-freeze) an SFTP folder of a real sshd that every agent polls:
 * - ha-kill: two agents; one of them, at random, SIGKILLed at random moments and replaced by a new
 *   agent (another state folder: another host as far as leases go), so its files move to the
 *   others only once their leases run out;
 * - ha-freeze: two agents; one of them, at random, frozen (SIGSTOP) for twice the lease, then let
 *   go (SIGCONT): the other takes its files over meanwhile, and the one let go must not touch them
 *   again (the sandbox's job list shows any document sent twice).
 * The sandbox answers every create and upload 300 ms late, so that the agents hold files when a
 * fault comes; each fault hits an agent that holds one (it logged a file taken and not yet archived
 * or refused). Affected: files taken over from another agent.
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { startSshd } from '../../../test/sources/sftp/support/sshd.js';
import { listFolder } from '../observe.js';
import { type AgentProcess, PROOF_WRITTEN, WEBHOOK_ACCEPTED, WEBHOOK_REPEATED } from '../processes.js';
import { checkReturns } from '../returns-invariants.js';
import {
  type ChaosSizes,
  type Injected,
  rng,
  runInWorld,
  type Scenario,
  type ScenarioResult,
  sleep,
  within,
} from '../scenario.js';
import type { World, WorldOptions } from '../world.js';
import { outageCounts } from './pg-faults.js';
import { sftpNotRun } from './sftp-drops.js';

/** Leases of 3 s renewed every second: failover within about 4 s. */
export const HA_CLUSTER = {
  leaseMs: '3s',
  renewMs: '1s',
  createMarginMs: '750ms',
  heartbeatMs: '1s',
  deadAfterMs: '3s',
} as const;
const LEASE_MS = 3_000;
/** A freeze lasts past the lease and a renewal round, and until the other agent took a file over. */
const FREEZE_MS = 2 * LEASE_MS + 1_000;
const FREEZE_MAX_MS = 30_000;
/** Added by the sandbox to every create and upload. */
const SERVICE_LATENCY_MS = 300;
const CREATE_ROUTES = ['/jobs/single-file', '/jobs/payload-pdf', '/jobs/payload-word'];

async function slowService(world: World): Promise<void> {
  for (const route of CREATE_ROUTES) {
    await world.control.call('POST', '/faults', { route, method: 'POST', latencyMs: SERVICE_LATENCY_MS });
  }
  await world.control.call('POST', '/faults', {
    route: '/upload/:jobId',
    method: 'PUT',
    latencyMs: SERVICE_LATENCY_MS,
  });
}

/** Whether the agent holds a file now, by its log (AgentProcess.held). */
const holding = (agent: AgentProcess) => agent.held.size > 0;

/**
 * The agent to hit: waits (up to 15 s) until one of them holds a file, and answers it (the one
 * `random` picks when both do, or neither does by then).
 */
async function holder(agents: readonly AgentProcess[], random: () => number): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const holders = agents.flatMap((agent, i) => (holding(agent) ? [i] : []));
    if (holders.length === 1) return holders[0]!;
    if (holders.length > 1 || Date.now() > deadline) return random() < 0.5 ? 0 : 1;
    await sleep(20);
  }
}

/**
 * Waits (up to `capMs`) until `agent` has taken a file over since its count was `before`: a fault
 * that outlasts the lease lasts until it had its effect, however busy the machine.
 */
async function tookOver(agent: AgentProcess, before: number, capMs: number): Promise<void> {
  const until = Date.now() + capMs;
  while ((agent.seen.get(TAKEN_OVER) ?? 0) === before && Date.now() < until) await sleep(50);
}

/** Starts agent `instance` (a state folder of its own) and waits for its start. */
async function startInstance(world: World, instance: number): Promise<AgentProcess> {
  const agent = world.startAgent({}, instance);
  await within(Promise.race([agent.started, agent.exited]), 60_000, `agent ${instance} start`);
  if (agent.child.exitCode !== null)
    throw new Error(`agent ${instance} exited at start:\n${agent.tail.join('\n')}`);
  return agent;
}

/** Waits for every file, then stops the agents still running: each must exit 0. */
async function finishAll(world: World, timeoutMs: number): Promise<void> {
  await world.waitPlaced(timeoutMs);
  const codes = await world.stopAgents();
  if (codes.some((code) => code !== 0)) {
    throw new Error(
      `an agent exited ${codes.join(', ')} after SIGTERM:\n${world.agents.at(-1)?.tail.join('\n')}`,
    );
  }
}

/** Lines of every agent of the world with this message. */
const counted = (world: World, msg: string) =>
  world.agents.reduce((n, agent) => n + (agent.seen.get(msg) ?? 0), 0);

const TAKEN_OVER = 'file taken over';
const LEASE_LOST = 'lease lost: another agent took the file over; this agent stopped touching it';
const HELD_ELSEWHERE = 'file held by another agent: left to it';

type Source = 'local' | 'sftp';

/**
 * A world of this file: PostgreSQL, short leases, the service slow, the drop folder local or on a
 * real sshd of its own; `body` runs the agents.
 */
async function runHa(
  scenario: Scenario,
  sizes: ChaosSizes,
  source: Source,
  files: number,
  body: (world: World) => Promise<Injected>,
  journal: Pick<WorldOptions, 'journalProxy' | 'journalTimeout' | 'webhookSlots' | 'returnsSettled'> = {},
): Promise<ScenarioResult> {
  const world = {
    ...journal,
    name: scenario.name.replaceAll('-', ''),
    files,
    mode: sizes.mode,
    agentEntry: sizes.agentEntry,
    journal: 'postgres' as const,
    cluster: HA_CLUSTER,
  };
  const run = (w: World) => slowService(w).then(() => body(w));
  if (source === 'local') return runInWorld(scenario, world, run);
  const notRun = sftpNotRun(scenario, sizes, files);
  if (notRun) return notRun;
  const sshd = await startSshd();
  const remotePath = path.join(sshd.files, 'outbox');
  mkdirSync(remotePath, { recursive: true });
  try {
    const sftp = {
      remotePath,
      host: sshd.host,
      port: sshd.port,
      username: sshd.username,
      privateKeyFile: sshd.privateKeyPath,
      hostKeySha256: sshd.hostKeySha256,
    };
    return await runInWorld(scenario, { ...world, sftp }, run);
  } finally {
    await sshd.stop();
  }
}

function haKill(name: string, source: Source): Scenario {
  return {
    name,
    fault: `one of two agents on one journal${source === 'sftp' ? ' polling one SFTP folder' : ''} SIGKILLed at random moments`,
    journals: ['postgres'],
    run(sizes) {
      const files = sizes.files ?? (sizes.quick ? 120 : 800);
      const kills = Math.max(1, sizes.kills ?? (sizes.quick ? 4 : 12));
      const random = rng(sizes.seed + 29);
      return runHa(this, sizes, source, files, async (world) => {
        let instances = 0;
        const live = [await startInstance(world, instances++), await startInstance(world, instances++)];
        const batch = Math.ceil(world.sets.length / (kills + 1));
        world.drop(batch);
        for (let k = 0; k < kills; k++) {
          await sleep(200 + Math.floor(random() * 1_500));
          const victim = await holder(live, random);
          live[victim]!.child.kill('SIGKILL');
          await live[victim]!.exited;
          world.drop(batch);
          live[victim] = await startInstance(world, instances++);
        }
        world.drop();
        await finishAll(world, 120_000 + files * 200);
        const takenOver = counted(world, TAKEN_OVER);
        return {
          injected: kills,
          injectedDetail: `${kills} SIGKILL of one of two agents; ${takenOver} files taken over by another agent`,
          affected: takenOver,
        };
      });
    },
  };
}

function haFreeze(name: string, source: Source): Scenario {
  return {
    name,
    fault: `one of two agents on one journal${source === 'sftp' ? ' polling one SFTP folder' : ''} frozen (SIGSTOP) past its lease, then let go`,
    journals: ['postgres'],
    run(sizes) {
      const files = sizes.files ?? (sizes.quick ? 120 : 800);
      const freezes = Math.max(1, sizes.faults ?? (sizes.quick ? 3 : 8));
      const random = rng(sizes.seed + 31);
      return runHa(this, sizes, source, files, async (world) => {
        const agents = [await startInstance(world, 0), await startInstance(world, 1)];
        const batch = Math.ceil(world.sets.length / (freezes + 1));
        for (let f = 0; f < freezes; f++) {
          // New files for each freeze (the earlier ones may all be done by now): an agent holds
          // some when the freeze comes.
          world.drop(batch);
          await sleep(200 + Math.floor(random() * (f === 0 ? 1_500 : 300)));
          const index = await holder(agents, random);
          const frozen = agents[index]!;
          const other = agents[1 - index]!;
          const takenBefore = other.seen.get(TAKEN_OVER) ?? 0;
          frozen.child.kill('SIGSTOP');
          // Past the lease and a renewal round: the other agent takes the frozen one's files. On a
          // busy machine that takes longer (an SFTP folder's adoption waits for the frozen agent's
          // heartbeat to age and for a poll): the freeze lasts until it did, FREEZE_MAX_MS at most.
          await sleep(FREEZE_MS);
          await tookOver(other, takenBefore, FREEZE_MAX_MS - FREEZE_MS);
          frozen.child.kill('SIGCONT');
        }
        world.drop();
        await finishAll(world, 120_000 + files * 200);
        const takenOver = counted(world, TAKEN_OVER);
        const lost = counted(world, LEASE_LOST);
        const leftAlone = counted(world, HELD_ELSEWHERE);
        return {
          injected: freezes,
          injectedDetail: `${freezes} SIGSTOP for ${FREEZE_MS / 1000}–${FREEZE_MAX_MS / 1000} s; ${takenOver} files taken over, ${lost} leases found lost, ${leftAlone} steps left to the new holder`,
          affected: takenOver,
        };
      });
    },
  };
}

export const haKillScenario = haKill('ha-kill', 'local');
export const haFreezeScenario = haFreeze('ha-freeze', 'local');
export const haSftpKillScenario = haKill('ha-sftp-kill', 'sftp');
export const haSftpFreezeScenario = haFreeze('ha-sftp-freeze', 'sftp');

/**
 * ha-pg-restart: two agents, the PostgreSQL server restarted under them (`pg_ctl restart -m fast`)
 * while both hold files. Both pause, keep their steps and go on; leases that ran out meanwhile go
 * to whichever agent takes them first.
 */
export const haPgRestartScenario: Scenario = {
  name: 'ha-pg-restart',
  fault: 'PostgreSQL restarted under two agents on one journal',
  journals: ['postgres'],
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 800);
    const restarts = Math.max(1, sizes.faults ?? (sizes.quick ? 3 : 8));
    const random = rng(sizes.seed + 37);
    return runHa(this, sizes, 'local', files, async (world) => {
      const agents = [await startInstance(world, 0), await startInstance(world, 1)];
      const batch = Math.ceil(world.sets.length / (restarts + 1));
      const took: number[] = [];
      world.drop(batch);
      for (let r = 0; r < restarts; r++) {
        await sleep(200 + Math.floor(random() * 1_500));
        await holder(agents, random);
        world.drop(batch);
        const t = Date.now();
        await world.postgres!.restart();
        took.push(Date.now() - t);
      }
      world.drop();
      await finishAll(world, 120_000 + files * 200);
      const outages = outageCounts(world);
      return {
        injected: restarts,
        injectedDetail: `${restarts} restarts (${took.join(', ')} ms); the agents logged ${outages.down} outages and ${outages.back} resumptions; ${counted(world, TAKEN_OVER)} files taken over`,
      };
    });
  },
};

/** The journal's statement timer in ha-pg-cut: a stall outlasts it (plus the client's 2 s grace). */
const CUT_TIMEOUT_MS = 3_000;

/**
 * ha-pg-cut: two agents, one of them (instance 0) reaching PostgreSQL through a TCP fault proxy:
 * its connections are reset, refused for a while, or stalled past its statement timer and then
 * cut, while the other agent goes on. A cut longer than the lease hands its files to the other
 * agent; when it comes back it must find them lost and send nothing for them.
 */
export const haPgCutScenario: Scenario = {
  name: 'ha-pg-cut',
  fault: 'one of two agents cut off from PostgreSQL (TCP proxy) and restored',
  journals: ['postgres'],
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 800);
    const cuts = Math.max(1, sizes.faults ?? (sizes.quick ? 3 : 8));
    const random = rng(sizes.seed + 41);
    return runHa(
      this,
      sizes,
      'local',
      files,
      async (world) => {
        const proxy = world.proxies.journal!;
        const cutOff = await startInstance(world, 0);
        const other = await startInstance(world, 1);
        const batch = Math.ceil(world.sets.length / (cuts + 1));
        const kinds: string[] = [];
        world.drop(batch);
        for (let c = 0; c < cuts; c++) {
          await sleep(200 + Math.floor(random() * 1_500));
          // New files first: the agent to cut off holds some of them when the cut comes.
          world.drop(batch);
          await holder([cutOff], random);
          // Every other cut outlasts the lease: the other agent takes the files over meanwhile.
          const long = c % 2 === 0;
          const ms = long ? FREEZE_MS : 500 + Math.floor(random() * 1_500);
          const takenBefore = other.seen.get(TAKEN_OVER) ?? 0;
          const outlasting = () =>
            long ? tookOver(other, takenBefore, FREEZE_MAX_MS - FREEZE_MS) : undefined;
          const cutAt = Date.now();
          if (random() < 0.5) {
            proxy.set({ refuse: true });
            proxy.resetAll();
            await sleep(ms);
            await outlasting();
            kinds.push(`down ${Date.now() - cutAt} ms`);
          } else {
            proxy.set({ stall: true });
            await sleep(Math.max(ms, CUT_TIMEOUT_MS + 2_000 + 500));
            await outlasting();
            proxy.resetAll();
            kinds.push(`stalled then cut ${Date.now() - cutAt} ms`);
          }
          proxy.set({});
        }
        world.drop();
        await finishAll(world, 120_000 + files * 200);
        const takenOver = counted(world, TAKEN_OVER);
        return {
          injected: cuts,
          injectedDetail: `${kinds.join(', ')}; ${takenOver} files taken over, ${counted(world, LEASE_LOST)} leases found lost`,
          affected: takenOver,
        };
      },
      { journalProxy: 'instance-0', journalTimeout: `${CUT_TIMEOUT_MS}ms` },
    );
  },
};

/** ha-webhook: the service's clock runs this many times real time, in steps of SERVICE_STEP_MS. */
const SERVICE_SPEED = 2;
const SERVICE_STEP_MS = 500;

/** Moves the sandbox's clock on (its sending events end in seconds) until stopped. */
function runServiceClock(world: World): { stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      await sleep(SERVICE_STEP_MS);
      // The advance waits for the finalisations it starts: never two at once.
      await world.control
        .call('POST', '/clock/advance', { ms: SERVICE_STEP_MS * SERVICE_SPEED })
        .catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
    },
  };
}

/**
 * The agent to hit in the return phase: the first to accept a webhook from now on (its poll and
 * downloads run after its answer), within 15 s; else the one `random` picks.
 */
async function webhookHandler(agents: readonly AgentProcess[], random: () => number): Promise<number> {
  const before = agents.map((a) => a.webhooksAccepted.length);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const i = agents.findIndex((a, k) => a.webhooksAccepted.length > before[k]!);
    if (i >= 0) return i;
    await sleep(10);
  }
  return random() < 0.5 ? 0 : 1;
}

/**
 * Waits until the return path settled: the settled checks find nothing the unsettled ones do not
 * (every proof written, every status file final). Stuck means no progress for `stallMs`.
 */
async function waitReturnsSettled(world: World, stallMs: number): Promise<void> {
  let best = Number.POSITIVE_INFINITY;
  let deadline = Date.now() + stallMs;
  for (;;) {
    const seen = await world.returnsObservation();
    const refused = new Set(listFolder(world.errorDir).map((e) => e.md5));
    const options = {
      sets: world.sets,
      refusedItems: new Set(world.sets.filter((s) => refused.has(s.itemMd5)).map((s) => s.itemName)),
    };
    const settled = checkReturns(seen, { ...options, settled: true });
    const always = checkReturns(seen, { ...options, settled: false });
    const open = settled.violations.length - always.violations.length;
    if (open === 0) return;
    if (open < best) {
      best = open;
      deadline = Date.now() + stallMs;
    }
    if (Date.now() > deadline) {
      const left = settled.violations.filter((v) => !always.violations.includes(v));
      throw new Error(
        `the return path did not settle: ${open} checks open, none closed in the last ${stallMs} ms:\n${left.slice(0, 15).join('\n')}`,
      );
    }
    await sleep(1_000);
  }
}

/**
 * ha-webhook: two agents on one journal and one drop folder, each with its webhook receiver on,
 * behind a load balancer that duplicates every delivery to both at once (webhook-fanout.ts: the
 * same bytes and signed headers; the sender gets the better answer). The service's clock runs, so
 * its sending events end and their webhooks (status changes, proofs ready, jobs done) come while
 * one agent, at random, is SIGKILLed and replaced: half of the kills while files are being sent
 * (an agent holding one), half after, each right after an agent accepted a delivery (its poll
 * and downloads still to come). The run ends once every job is followed to its final events:
 * each proof written once, each status file final (returns-invariants.ts), and no delivery
 * accepted by both agents.
 */
export const haWebhookScenario: Scenario = {
  name: 'ha-webhook',
  fault: 'every webhook delivered to both of two agents at once; one of them SIGKILLed at random moments',
  journals: ['postgres'],
  run(sizes) {
    const files = sizes.files ?? (sizes.quick ? 120 : 800);
    const kills = Math.max(2, sizes.kills ?? (sizes.quick ? 4 : 12));
    const random = rng(sizes.seed + 43);
    return runHa(
      this,
      sizes,
      'local',
      files,
      async (world) => {
        const fanout = world.fanout!;
        const clock = runServiceClock(world);
        const sending = Math.ceil(kills / 2);
        try {
          let instances = 0;
          const live: AgentProcess[] = [];
          const start = async (slot: number) => {
            const agent = await startInstance(world, instances++);
            fanout.setBackend(slot, await within(agent.webhookUrl, 10_000, `agent ${slot} webhook receiver`));
            live[slot] = agent;
          };
          const replace = async (slot: number) => {
            live[slot]!.child.kill('SIGKILL');
            await live[slot]!.exited;
            await start(slot);
          };
          await start(0);
          await start(1);
          const batch = Math.ceil(world.sets.length / (sending + 1));
          world.drop(batch);
          for (let k = 0; k < sending; k++) {
            await sleep(200 + Math.floor(random() * 1_500));
            const victim = await holder(live, random);
            world.drop(batch);
            await replace(victim);
          }
          world.drop();
          await world.waitPlaced(120_000 + files * 200);
          for (let k = sending; k < kills; k++) {
            await sleep(200 + Math.floor(random() * 1_000));
            await replace(await webhookHandler(live, random));
          }
          await waitReturnsSettled(world, 120_000);
        } finally {
          await clock.stop();
        }
        const codes = await world.stopAgents();
        if (codes.some((code) => code !== 0)) {
          throw new Error(
            `an agent exited ${codes.join(', ')} after SIGTERM:\n${world.agents.at(-1)?.tail.join('\n')}`,
          );
        }
        const f = fanout.stats();
        const accepted = counted(world, WEBHOOK_ACCEPTED);
        const repeated = counted(world, WEBHOOK_REPEATED);
        return {
          injected: kills,
          injectedDetail: `${kills} SIGKILL of one of two agents (${sending} while sending, ${kills - sending} after a webhook accepted); ${f.deliveries} deliveries in ${f.requests} attempts, ${f.reachedAll} reaching both agents, ${f.refused} refused to the sender; ${accepted} accepted, ${repeated} answered as repeats; ${counted(world, PROOF_WRITTEN)} proofs written; ${counted(world, TAKEN_OVER)} files taken over`,
          affected: counted(world, TAKEN_OVER),
        };
      },
      { webhookSlots: 2, returnsSettled: true },
    );
  },
};
