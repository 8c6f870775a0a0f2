/**
 * The output disk full, then freed: the drop, archive and error folders live on a small tmpfs
 * (mounted here; root needed), filled with a ballast file after the drop, so every archive write
 * meets ENOSPC. Then the ballast goes: every file must end archived, nothing partial left behind.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finish, runInWorld, type Scenario, type ScenarioResult, sleep, within } from '../scenario.js';

const MOUNT_SIZE = '16m';

/** Writes zeros until the filesystem refuses (ENOSPC); answers the bytes written. */
function fillUp(file: string): number {
  const fd = openSync(file, 'w');
  let written = 0;
  try {
    for (const size of [1024 * 1024, 64 * 1024, 4096, 512, 1]) {
      const block = Buffer.alloc(size);
      for (;;) {
        try {
          written += writeSync(fd, block);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}

function mountTmpfs(): { dir: string; unmount(): void } | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docex-chaos-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${MOUNT_SIZE}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs (${(err as Error).message.split('\n')[0]}); run as root`;
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const diskFullScenario: Scenario = {
  name: 'disk-full',
  fault: 'output disk full (ENOSPC), then freed',
  async run(sizes): Promise<ScenarioResult> {
    const files = sizes.files ?? (sizes.quick ? 100 : 400);
    const fullMs = sizes.quick ? 4_000 : 15_000;
    const mount = mountTmpfs();
    if (typeof mount === 'string') {
      return {
        scenario: this.name,
        fault: this.fault,
        injected: 0,
        injectedDetail: '',
        affected: 0,
        files,
        durationMs: 0,
        skipped: mount,
      };
    }
    try {
      return await runInWorld(
        this,
        {
          name: 'disk',
          files,
          mode: sizes.mode,
          agentEntry: sizes.agentEntry,
          journal: sizes.journal,
          foldersRoot: mount.dir,
        },
        async (world) => {
          world.drop();
          const ballast = path.join(mount.dir, 'ballast');
          const filled = fillUp(ballast);
          const agent = world.startAgent();
          await within(Promise.race([agent.started, agent.exited]), 60_000, 'agent start');
          await sleep(fullMs);
          const refusedWrites = world.agents.reduce((n, a) => n + (a.seen.get('file must wait') ?? 0), 0);
          const placedWhileFull = world.placed();
          rmSync(ballast);
          await finish(world, 120_000 + files * 300);
          return {
            injected: refusedWrites,
            injectedDetail: `${refusedWrites} writes refused with the disk full for ${fullMs / 1000} s (ballast ${Math.round(filled / 1024)} KiB; ${placedWhileFull} files placed meanwhile)`,
          };
        },
      );
    } finally {
      mount.unmount();
    }
  },
};
