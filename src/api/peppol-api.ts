import { downloadUrlSchema, type PeppolDocument, pageSchema, peppolDocumentSchema } from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { type DownloadOptions, type DownloadResult, downloadFile } from './download.js';
import { iterateAfter, type Page } from './pagination.js';
import { type DateInput, optionalDateTime } from './query.js';
import type { DownloadUrl } from './sending-events-api.js';
import type { FileTransferDeps } from './upload.js';

export interface PeppolListQuery {
  /** Default createdAt; from/until filter on this field. */
  sortField?: 'createdAt' | 'lastModifiedAt';
  /** Default desc. */
  sortOrder?: 'asc' | 'desc';
  from?: DateInput;
  until?: DateInput;
  after?: string | undefined;
  maxItems?: number;
}

const documentPage = pageSchema(peppolDocumentSchema);

export class PeppolApi {
  constructor(
    private readonly caller: ApiCaller,
    private readonly files: FileTransferDeps,
  ) {}

  async list(query: PeppolListQuery = {}, options?: CallOptions): Promise<Page<PeppolDocument>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/peppol-incoming-documents',
        query: {
          sortField: query.sortField,
          sortOrder: query.sortOrder,
          from: optionalDateTime(query.from, 'from'),
          until: optionalDateTime(query.until, 'until'),
          after: query.after,
          maxItems: query.maxItems,
        },
        options,
      },
      documentPage,
    );
    return { items: page.items, totalItems: page.totalItems };
  }

  iterate(query: Omit<PeppolListQuery, 'maxItems'> & { pageSize?: number } = {}, options?: CallOptions) {
    const { pageSize, after, ...filters } = query;
    return iterateAfter<PeppolDocument>(
      (cursor, maxItems) => this.list({ ...filters, after: cursor, maxItems }, options),
      {
        route: '/peppol-incoming-documents',
        ...(pageSize === undefined ? {} : { pageSize }),
        ...(after === undefined ? {} : { after }),
      },
    );
  }

  get(senderId: string, id: string, options?: CallOptions): Promise<PeppolDocument> {
    return this.caller.call(
      {
        method: 'GET',
        route: '/peppol-incoming-documents/sender/{senderId}/document/{id}',
        params: { senderId, id },
        options,
      },
      peppolDocumentSchema,
    );
  }

  /** Pre-signed URL of the UBL XML, valid 10 minutes. */
  async downloadUrl(senderId: string, id: string, options?: CallOptions): Promise<DownloadUrl> {
    const answer = await this.caller.call(
      {
        method: 'GET',
        route: '/peppol-incoming-documents/sender/{senderId}/document/{id}/download-url',
        params: { senderId, id },
        options,
      },
      downloadUrlSchema,
    );
    return { url: answer.url, expiresAt: answer.expiresAt };
  }

  /** Streams a download URL to `targetPath` (temp file, fsync, rename). */
  downloadFile(url: string, targetPath: string, options?: DownloadOptions): Promise<DownloadResult> {
    return downloadFile(this.files, url, targetPath, options);
  }
}
