import {
  JOB_STATUSES,
  type Job,
  jobSchema,
  normaliseJobStatus,
  type PayloadJobRequest,
  pageSchema,
  payloadWordCreatedSchema,
  type SingleFileJobRequest,
  uploadJobCreatedSchema,
} from '../domain/wire.js';
import type { ApiCaller, CallOptions } from './api-caller.js';
import { iterateAfter, type Page } from './pagination.js';
import { type DateInput, optionalDateTime } from './query.js';
import type { UnknownValueReporter } from './unknown-values.js';
import { type FileTransferDeps, type UploadOptions, type UploadResult, uploadFile } from './upload.js';

export interface JobListQuery {
  /** Jobs with startDate after this. */
  from?: DateInput;
  /** Jobs with startDate before this. */
  until?: DateInput;
  workflowId?: string;
  after?: string | undefined;
  maxItems?: number;
}

export interface JobCreated {
  id: string;
  /** Pre-signed: a secret until it expires. Never log it. */
  fileUploadUrl: string;
  uploadExpiresAt?: string | undefined;
}

const jobPage = pageSchema(jobSchema);

export class JobsApi {
  constructor(
    private readonly caller: ApiCaller,
    private readonly unknown: UnknownValueReporter,
    private readonly files: FileTransferDeps,
  ) {}

  async get(id: string, options?: CallOptions): Promise<Job> {
    const job = await this.caller.call(
      { method: 'GET', route: '/jobs/{id}', params: { id }, options },
      jobSchema,
    );
    return this.normalise(job);
  }

  async list(query: JobListQuery = {}, options?: CallOptions): Promise<Page<Job>> {
    const page = await this.caller.call(
      {
        method: 'GET',
        route: '/jobs',
        query: {
          from: optionalDateTime(query.from, 'from'),
          until: optionalDateTime(query.until, 'until'),
          workflowId: query.workflowId,
          after: query.after,
          maxItems: query.maxItems,
        },
        options,
      },
      jobPage,
    );
    return { items: page.items.map((job) => this.normalise(job)), totalItems: page.totalItems };
  }

  iterate(query: Omit<JobListQuery, 'maxItems'> & { pageSize?: number } = {}, options?: CallOptions) {
    const { pageSize, after, ...filters } = query;
    return iterateAfter<Job>(
      (cursor, maxItems) => this.list({ ...filters, after: cursor, maxItems }, options),
      {
        route: '/jobs',
        ...(pageSize === undefined ? {} : { pageSize }),
        ...(after === undefined ? {} : { after }),
      },
    );
  }

  /** Sent once, never retried: a retry could create a second job. */
  async createSingleFile(request: SingleFileJobRequest, options?: CallOptions): Promise<JobCreated> {
    const created = await this.caller.call(
      { method: 'POST', route: '/jobs/single-file', body: request, options },
      uploadJobCreatedSchema,
    );
    return { id: created.id, fileUploadUrl: created.fileUploadUrl, uploadExpiresAt: created.uploadExpiresAt };
  }

  async createPayloadPdf(request: PayloadJobRequest, options?: CallOptions): Promise<JobCreated> {
    const created = await this.caller.call(
      { method: 'POST', route: '/jobs/payload-pdf', body: request, options },
      uploadJobCreatedSchema,
    );
    return { id: created.id, fileUploadUrl: created.fileUploadUrl, uploadExpiresAt: created.uploadExpiresAt };
  }

  async createPayloadWord(request: PayloadJobRequest, options?: CallOptions): Promise<{ id: string }> {
    const created = await this.caller.call(
      { method: 'POST', route: '/jobs/payload-word', body: request, options },
      payloadWordCreatedSchema,
    );
    return { id: created.id };
  }

  /** Streams the file to the job's pre-signed URL and checks the ETag. */
  uploadFile(fileUploadUrl: string, filePath: string, options: UploadOptions = {}): Promise<UploadResult> {
    return uploadFile(this.files, fileUploadUrl, filePath, options);
  }

  private normalise(job: Job): Job {
    const status = normaliseJobStatus(job.status);
    this.unknown.check('job.status', status, JOB_STATUSES);
    return status === job.status ? job : { ...job, status };
  }
}
