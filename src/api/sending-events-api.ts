import {
  BUSINESS_STATUSES,
  DOCUMENT_TYPES,
  downloadUrlSchema,
  pageSchema,
  type SendingEvent,
  sendingEventSchema,
  TECHNICAL_STATUSES,
} from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { type DownloadOptions, type DownloadResult, downloadFile } from './download.js';
import { iterateAfter, type Page } from './pagination.js';
import { type DateInput, optionalDateTime } from './query.js';
import type { UnknownValueReporter } from './unknown-values.js';
import type { FileTransferDeps } from './upload.js';

export interface SendingEventListQuery {
  jobId?: string;
  from?: DateInput;
  until?: DateInput;
  businessStatus?: string;
  after?: string | undefined;
  maxItems?: number;
}

export interface DownloadUrl {
  /** Pre-signed, valid 10 minutes: a secret. Never log it. */
  url: string;
  expiresAt?: string | undefined;
}

const eventPage = pageSchema(sendingEventSchema);

export class SendingEventsApi {
  constructor(
    private readonly caller: ApiCaller,
    private readonly unknown: UnknownValueReporter,
    private readonly files: FileTransferDeps,
  ) {}

  async get(id: string, options?: CallOptions): Promise<SendingEvent> {
    const event = await this.caller.call(
      { method: 'GET', route: '/sending-events/{id}', params: { id }, options },
      sendingEventSchema,
    );
    return this.checked(event);
  }

  async list(query: SendingEventListQuery = {}, options?: CallOptions): Promise<Page<SendingEvent>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/sending-events',
        query: {
          jobId: query.jobId,
          from: optionalDateTime(query.from, 'from'),
          until: optionalDateTime(query.until, 'until'),
          businessStatus: query.businessStatus,
          after: query.after,
          maxItems: query.maxItems,
        },
        options,
      },
      eventPage,
    );
    return { items: page.items.map((event) => this.checked(event)), totalItems: page.totalItems };
  }

  iterate(
    query: Omit<SendingEventListQuery, 'maxItems'> & { pageSize?: number } = {},
    options?: CallOptions,
  ) {
    const { pageSize, after, ...filters } = query;
    return iterateAfter<SendingEvent>(
      (cursor, maxItems) => this.list({ ...filters, after: cursor, maxItems }, options),
      {
        route: '/sending-events',
        ...(pageSize === undefined ? {} : { pageSize }),
        ...(after === undefined ? {} : { after }),
      },
    );
  }

  /** Creates a new sending event from a final one; sent once. */
  async resend(id: string, options?: CallOptions): Promise<SendingEvent> {
    const event = await this.caller.call(
      { method: 'POST', route: '/sending-events/{id}/resend', params: { id }, options },
      sendingEventSchema,
    );
    return this.checked(event);
  }

  async downloadUrl(id: string, fileReference: string, options?: CallOptions): Promise<DownloadUrl> {
    const answer = await this.caller.call(
      {
        method: 'GET',
        route: '/sending-events/{id}/files/{fileReference}/download-url',
        params: { id, fileReference },
        options,
      },
      downloadUrlSchema,
    );
    return { url: answer.url, expiresAt: answer.expiresAt };
  }

  downloadFile(url: string, targetPath: string, options?: DownloadOptions): Promise<DownloadResult> {
    return downloadFile(this.files, url, targetPath, options);
  }

  private checked(event: SendingEvent): SendingEvent {
    this.unknown.check('sendingEvent.status', event.status, TECHNICAL_STATUSES);
    this.unknown.check('sendingEvent.businessStatus', event.businessStatus, BUSINESS_STATUSES);
    for (const doc of event.documents ?? []) this.unknown.check('document.type', doc.type, DOCUMENT_TYPES);
    return event;
  }
}
