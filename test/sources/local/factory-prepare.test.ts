/** A local folder built by its factory tells the pipeline when files start waiting (it warms the inspector). */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../../src/config/schema.js';
import { ManualClock } from '../../../src/core/clock.js';
import type { FolderSource } from '../../../src/sources/folder-source.js';
import { openFolderSource } from '../../../src/sources/open-source.js';
import { makeTempDir } from './support.js';

const dirs: string[] = [];
const sources: FolderSource[] = [];
afterEach(async () => {
  for (const s of sources.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('a local folder source built by its factory', () => {
  it('asks the pipeline to prepare its intake once the start-up scan finds files waiting to settle', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    writeFileSync(path.join(dir, 'invoice.pdf'), '%PDF-1.7');
    const folder = agentConfigSchema.parse({
      sandbox: { enabled: true },
      stateDir: path.join(dir, '.state'),
      folders: [{ name: 'invoices', workflowId: 'wf_pdf_email', source: { type: 'local', path: dir } }],
    }).folders[0]!;
    let prepared = 0;
    const source = openFolderSource(folder, {
      hooks: {
        accept: () => true,
        isCompanion: () => false,
        companionsOf: () => [],
        errorFiles: () => [],
        rejectEntry: async () => {},
        prepareIntake: () => {
          prepared += 1;
        },
      },
      journal: { byPath: async () => undefined, holds: async () => false } as never,
      clock: new ManualClock(),
      log: pino({ level: 'silent' }),
      timing: { statIntervalMs: 0, rescanIntervalMs: 0, watch: false },
    });
    sources.push(source);
    await source.start();
    expect(prepared).toBe(1);
  });
});
