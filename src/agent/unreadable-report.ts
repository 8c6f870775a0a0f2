/**
 * `<stateDir>/unreadable-files.json`: the files the running agent reports it cannot read, stat or
 * move (their owner, mode and fix), for `docex-agent status`, which reads the state folder and the
 * journal rather than asking the running agent. Emptied at start, rewritten (atomically) whenever
 * the list changes: a handful of writes a day at most, never one per pass.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../core/clock.js';
import { writeFileAtomic } from '../core/fs.js';
import type { Logger } from '../core/logger.js';
import type { UnreadableFile } from '../sources/local/index.js';

export const UNREADABLE_REPORT_FILE = 'unreadable-files.json';

export interface UnreadableReportContent {
  /** When the agent wrote it (ISO 8601). */
  writtenAt: string;
  /** The agent process that wrote it. */
  pid: number;
  files: UnreadableFile[];
}

export class UnreadableReport {
  private writing: Promise<void> = Promise.resolve();
  private pending = false;
  private failing = false;

  constructor(
    private readonly options: {
      stateDir: string;
      files: () => UnreadableFile[];
      clock: Clock;
      log: Logger;
    },
  ) {}

  get file(): string {
    return path.join(this.options.stateDir, UNREADABLE_REPORT_FILE);
  }

  /** A fresh, empty report: what an earlier run left no longer holds. */
  async start(): Promise<void> {
    await this.write([]);
  }

  /** Waits for the write in progress. */
  async stop(): Promise<void> {
    await this.writing;
  }

  /** The list changed: written once the write in progress (if any) is done, with the list then. */
  changed(): void {
    if (this.pending) return;
    this.pending = true;
    this.writing = this.writing.then(async () => {
      this.pending = false;
      await this.write(this.options.files());
    });
  }

  private async write(files: UnreadableFile[]): Promise<void> {
    const content: UnreadableReportContent = {
      writtenAt: new Date(this.options.clock.now()).toISOString(),
      pid: process.pid,
      files,
    };
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(content, null, 2)}\n`);
      if (this.failing) this.options.log.info({ file: this.file }, 'unreadable-file report written again');
      this.failing = false;
    } catch (err) {
      // `status` misses the list meanwhile; the log line, the gauge and /readyz still have it.
      if (!this.failing)
        this.options.log.warn({ err, file: this.file }, 'unreadable-file report not written');
      this.failing = true;
    }
  }
}

/** The last report of the agent of this state folder, if there is one. */
export function readUnreadableReport(stateDir: string): UnreadableReportContent | undefined {
  try {
    return JSON.parse(
      readFileSync(path.join(stateDir, UNREADABLE_REPORT_FILE), 'utf8'),
    ) as UnreadableReportContent;
  } catch {
    return undefined;
  }
}
