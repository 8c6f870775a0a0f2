/**
 * Saves every incoming Peppol document once. A pass lists GET /peppol-incoming-documents by
 * createdAt ascending from the high-water mark minus an overlap (a document the service records
 * late, with an earlier createdAt, is still found), skips the ids already saved, and for each new
 * one asks for its 10-minute URL right before downloading it (again when it expired), writes the
 * XML and then its .json summary through the output target, and only then records the id. A crash
 * between the writes and the record rewrites the same names on the next pass: harmless. The mark
 * moves only over documents handled in order, so a failed one is listed again.
 */
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { DownloadUrl } from '../api/index.js';
import { isApiError } from '../api/index.js';
import type { PeppolApi } from '../api/peppol-api.js';
import type { Clock } from '../core/clock.js';
import { isDocexError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { PeppolDocument } from '../domain/wire.js';
import type { OutputTarget } from '../outputs/types.js';
import type { InboxStore } from './inbox-store.js';
import { sanitizePart } from './peppol-names.js';
import { describePeppolDocument } from './peppol-summary.js';

export type { PeppolSummaryFile } from './peppol-summary.js';

export type PeppolSource = Pick<PeppolApi, 'iterate' | 'downloadUrl' | 'downloadFile'>;

export interface PeppolPollerOptions {
  peppol: PeppolSource;
  store: InboxStore;
  target: OutputTarget;
  /** Downloads land here first (parsed, then copied to the target): `<stateDir>/inbox-tmp`. */
  tmpDir: string;
  clock: Clock;
  log: Logger;
  overlapMs: number;
  pageSize?: number;
  /** How many times an expired download URL is asked for again before the pass gives up. */
  urlAttempts?: number;
}

export interface PassResult {
  listed: number;
  saved: number;
  skipped: number;
  gone: number;
  /** The error that ended the pass early (the next pass starts from the last handled document). */
  error?: unknown;
}

function isGone(err: unknown): boolean {
  return isApiError(err) && err.status === 404;
}

/** The files host answers an expired pre-signed URL with 403 (decisions, Wire conventions). */
function isExpiredUrl(err: unknown): boolean {
  return isApiError(err) && (err.status === 403 || err.status === 410);
}

export class PeppolPoller {
  private running: Promise<PassResult> | undefined;
  private again = false;
  private stopped = false;
  /** Aborted by stop(): a download or listing in flight ends at once. */
  private readonly abort = new AbortController();
  private lastPassAt: number | undefined;
  /** Documents saved since start, for metrics. */
  savedCount = 0;

  constructor(private readonly opts: PeppolPollerOptions) {}

  /** When the last pass ended (epoch ms of the injected clock). */
  get lastPass(): number | undefined {
    return this.lastPassAt;
  }

  /**
   * Runs a pass now, or joins the one running and runs one more after it (what triggered this
   * call may have come after the running pass listed its page).
   */
  poll(): Promise<PassResult> {
    if (this.stopped) return Promise.resolve({ listed: 0, saved: 0, skipped: 0, gone: 0 });
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = (async () => {
      let result: PassResult;
      do {
        this.again = false;
        result = await this.pass();
      } while (this.again && !this.stopped);
      return result;
    })().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Waits for the pass in flight; later polls do nothing. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<PassResult> {
    const { store, log, overlapMs } = this.opts;
    const result: PassResult = { listed: 0, saved: 0, skipped: 0, gone: 0 };
    let mark: number | undefined;
    try {
      mark = await store.highWaterMark();
    } catch (err) {
      // The store unreachable (a PostgreSQL outage): the next scheduled poll tries again.
      result.error = err;
      log.warn(
        { err, code: isDocexError(err) ? err.code : undefined },
        'peppol poll skipped: its store cannot be read',
      );
      this.lastPassAt = this.opts.clock.now();
      return result;
    }
    const from = mark === undefined ? undefined : mark - overlapMs;
    let newest: number | undefined;
    // The mark may only pass what was handled in order; a service that ignores sortOrder=asc would
    // otherwise let an early end skip older documents not listed yet.
    let ascending = true;
    let previous: number | undefined;
    try {
      await mkdir(this.opts.tmpDir, { recursive: true, mode: 0o700 });
      const docs = this.opts.peppol.iterate(
        {
          sortField: 'createdAt',
          sortOrder: 'asc',
          ...(from === undefined ? {} : { from }),
          pageSize: this.opts.pageSize ?? 100,
        },
        { signal: this.abort.signal },
      );
      for await (const doc of docs) {
        if (this.stopped) break;
        result.listed++;
        if (await store.isSaved(doc.id)) result.skipped++;
        else if (await this.save(doc)) {
          result.saved++;
          this.savedCount++;
        } else result.gone++;
        const createdAt = Date.parse(doc.createdAt);
        if (Number.isNaN(createdAt) || (previous !== undefined && createdAt < previous)) ascending = false;
        else previous = createdAt;
        if (!Number.isNaN(createdAt) && (newest === undefined || createdAt > newest)) newest = createdAt;
      }
    } catch (err) {
      result.error = err;
      if (this.stopped) return result;
      log.warn(
        { err, code: isDocexError(err) ? err.code : undefined, ...counts(result) },
        'peppol poll ended early; the next poll resumes',
      );
    } finally {
      // Forget saved ids only well behind the overlap window, which a later listing may return.
      if (newest !== undefined && (ascending || result.error === undefined)) {
        await store
          .advanceHighWaterMark(newest, overlapMs + 86_400_000)
          .catch((err: unknown) =>
            log.warn(
              { err, code: isDocexError(err) ? err.code : undefined },
              'peppol high-water mark not recorded; the next poll lists those documents again',
            ),
          );
      } else if (!ascending) log.warn(counts(result), 'peppol list was not in createdAt order; mark kept');
      this.lastPassAt = this.opts.clock.now();
    }
    if (result.saved > 0 || result.gone > 0) log.info(counts(result), 'peppol poll done');
    else log.debug(counts(result), 'peppol poll done');
    return result;
  }

  /** Saves one document; false when the service no longer has it (404). */
  private async save(doc: PeppolDocument): Promise<boolean> {
    const { log, target, store } = this.opts;
    const tmp = path.join(this.opts.tmpDir, `${sanitizePart(doc.id)}.xml`);
    try {
      if (!(await this.download(doc, tmp))) return false;
      const bytes = await readFile(tmp);
      const { summary, names, ublError } = describePeppolDocument(doc, bytes.toString('utf8'), bytes.length);
      // Saved all the same: the ERP decides; the service's record names it.
      if (ublError) log.warn({ documentId: doc.id, err: ublError }, 'peppol document is not readable UBL');
      await target.write(names.xml, () => createReadStream(tmp));
      // The summary comes second: an ERP that waits for the .json never reads a missing XML.
      await target.write(names.json, `${JSON.stringify(summary, null, 2)}\n`);
      await store.markSaved({ id: doc.id, createdAt: Date.parse(doc.createdAt) || 0, stem: names.stem });
      log.info(
        {
          documentId: doc.id,
          senderId: summary.sender.id,
          documentType: summary.documentType,
          documentNumber: summary.documentNumber,
          file: names.xml,
        },
        'peppol document saved',
      );
      return true;
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /** Downloads the XML to `tmp`, asking for a fresh URL when one expired; false on 404. */
  private async download(doc: PeppolDocument, tmp: string): Promise<boolean> {
    const { peppol, log } = this.opts;
    const attempts = this.opts.urlAttempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      let url: DownloadUrl;
      try {
        url = await peppol.downloadUrl(doc.senderId, doc.id, { signal: this.abort.signal });
      } catch (err) {
        if (!isGone(err)) throw err;
        log.warn({ documentId: doc.id, senderId: doc.senderId }, 'peppol document listed but gone; skipped');
        return false;
      }
      try {
        await peppol.downloadFile(url.url, tmp, { signal: this.abort.signal });
        return true;
      } catch (err) {
        if (!isExpiredUrl(err) || attempt >= attempts) throw err;
        log.info({ documentId: doc.id, attempt }, 'peppol download URL expired; asking for a new one');
      }
    }
  }
}

function counts(r: PassResult) {
  return { listed: r.listed, saved: r.saved, skipped: r.skipped, gone: r.gone };
}
