/**
 * The SFTP server dropping connections mid-transfer: a real OpenSSH sshd serves the drop folder,
 * reached through a TCP fault proxy that resets a third of the connections after 150 KiB (in the
 * middle of a download), while the server itself drops every session now and then (its
 * per-connection processes killed). Each file must still be sent once and placed once, locally
 * and in the remote archive. Skipped (with the reason) when sshd is not installed.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { sshdAvailable, startSshd } from '../../../test/sources/sftp/support/sshd.js';
import {
  type ChaosSizes,
  finish,
  rng,
  runInWorld,
  type Scenario,
  type ScenarioResult,
  sleep,
  within,
} from '../scenario.js';
import { startTcpProxy } from '../tcp-proxy.js';

/** A cell on an SFTP folder that cannot run here (no sshd, or a mode SFTP folders refuse), said why. */
export function sftpNotRun(
  scenario: Pick<Scenario, 'name' | 'fault'>,
  sizes: ChaosSizes,
  files: number,
): ScenarioResult | undefined {
  const pairing = (sizes.mode?.folder['payloadPdf'] as { pairing?: string } | undefined)?.pairing;
  const skipped = !sshdAvailable
    ? 'no /usr/sbin/sshd here (install openssh-server)'
    : pairing === 'index-csv'
      ? 'index-csv pairing is not offered on SFTP folders (the configuration refuses it)'
      : undefined;
  if (!skipped) return undefined;
  const { name, fault } = scenario;
  return {
    scenario: name,
    fault,
    injected: 0,
    injectedDetail: '',
    affected: 0,
    files,
    durationMs: 0,
    skipped,
  };
}

export const sftpDropsScenario: Scenario = {
  name: 'sftp-drops',
  fault: 'SFTP server dropping connections mid-transfer',
  async run(sizes): Promise<ScenarioResult> {
    const files = sizes.files ?? (sizes.quick ? 40 : 200);
    const drops = sizes.quick ? 3 : 10;
    const notRun = sftpNotRun(this, sizes, files);
    if (notRun) return notRun;
    const random = rng(sizes.seed + 11);
    const sshd = await startSshd();
    const proxy = await startTcpProxy({ target: { host: sshd.host, port: sshd.port }, random });
    const remotePath = path.join(sshd.files, 'outbox');
    mkdirSync(remotePath, { recursive: true });
    try {
      return await runInWorld(
        this,
        {
          name: 'sftp',
          mode: sizes.mode,
          agentEntry: sizes.agentEntry,
          journal: sizes.journal,
          files,
          padBytes: 192 * 1024,
          sftp: {
            remotePath,
            host: '127.0.0.1',
            port: proxy.port,
            username: sshd.username,
            privateKeyFile: sshd.privateKeyPath,
            hostKeySha256: sshd.hostKeySha256,
          },
        },
        async (world) => {
          // A third of the connections break after 150 KiB from the server: a download cut in the middle.
          proxy.set({ resetAfterBytes: 150 * 1024, resetOn: 'down', resetShare: 0.33 });
          const agent = world.startAgent();
          await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
          let dropped = 0;
          for (let i = 0; i < drops; i++) {
            world.drop(Math.ceil(files / drops));
            await sleep(800 + Math.floor(random() * 1_200));
            sshd.dropSessions();
            dropped++;
          }
          world.drop();
          await finish(world, 180_000 + files * 500);
          return {
            injected: dropped + proxy.counters.resets,
            injectedDetail: `${dropped} times every session dropped by the server, ${proxy.counters.resets} connections reset after 150 KiB (of ${proxy.counters.connections})`,
          };
        },
      );
    } finally {
      await proxy.close();
      await sshd.stop();
    }
  },
};
