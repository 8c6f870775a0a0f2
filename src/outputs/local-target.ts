import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DocexError } from '../core/errors.js';
import { assertRealPath } from '../core/real-dir.js';
import type { OutputContent, OutputTarget } from './types.js';

/** Resolves `relPath` inside `root`, refusing anything that would leave it. */
export function resolveInside(root: string, relPath: string): string {
  const target = path.resolve(root, relPath);
  if (!relPath || path.isAbsolute(relPath) || !target.startsWith(path.resolve(root) + path.sep)) {
    throw new DocexError('DOCEX_OUTPUT_PATH', `output path ${JSON.stringify(relPath)} leaves its folder`);
  }
  return target;
}

/** An output folder on this machine: temp name beside the target, fsync, rename. */
export class LocalTarget implements OutputTarget {
  readonly description: string;

  constructor(
    private readonly root: string,
    private readonly fileMode = 0o640,
  ) {
    this.description = `local:${root}`;
  }

  async write(relPath: string, content: OutputContent): Promise<void> {
    const target = resolveInside(this.root, relPath);
    // Hidden, short and fixed-length (a name built from a long target could pass 255 bytes). A kill
    // mid-write can leave one behind: never under a final name, safe to delete.
    const temp = path.join(path.dirname(target), `.docex-${randomBytes(6).toString('hex')}.tmp`);
    try {
      await fs.mkdir(path.dirname(target), { recursive: true });
      // The output folder and every level the agent made in it: real directories, never links.
      await assertRealPath(this.root, path.dirname(target));
      if (typeof content === 'function') {
        await pipeline(content(), createWriteStream(temp, { flags: 'wx', mode: this.fileMode, flush: true }));
      } else {
        const handle = await fs.open(temp, 'wx', this.fileMode);
        try {
          await handle.writeFile(content);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      await fs.rename(temp, target);
    } catch (err) {
      await fs.rm(temp, { force: true }).catch(() => {});
      throw new DocexError('DOCEX_OUTPUT_WRITE', `could not write ${relPath} to ${this.description}`, {
        cause: err,
      });
    }
  }

  async exists(relPath: string): Promise<boolean> {
    return fs.lstat(resolveInside(this.root, relPath)).then(
      () => true,
      () => false,
    );
  }

  async sizeOf(relPath: string): Promise<number | undefined> {
    return fs.stat(resolveInside(this.root, relPath)).then(
      (s) => (s.isFile() ? s.size : undefined),
      () => undefined,
    );
  }

  async close(): Promise<void> {}
}
