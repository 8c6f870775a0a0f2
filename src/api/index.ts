export type { CompanyCreate, DepartmentCreate, PhysicalAddress, UserCreate } from './accounts-api.js';
export type { CallOptions } from './api-caller.js';
export { DocexClient, type DocexClientOptions } from './client.js';
export type { DownloadOptions, DownloadResult } from './download.js';
export { API_ERROR_CODES, ApiError, type ApiProblem, isApiError, redactSecrets } from './errors.js';
export type { JobCreated, JobListQuery } from './jobs-api.js';
export type { ApiObserver } from './observer.js';
export type { CursorPage, Page } from './pagination.js';
export type { PeppolListQuery } from './peppol-api.js';
export { type DateInput, formatDateTime } from './query.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export { isRetryableFailure } from './retry-loop.js';
export type { DownloadUrl, SendingEventListQuery } from './sending-events-api.js';
export { TokenProvider } from './token-provider.js';
export {
  createFilesAgent,
  createMtlsAgent,
  DEFAULT_TIMEOUTS,
  type MtlsMaterial,
  type MtlsTransport,
  type Pem,
  type Timeouts,
} from './transport.js';
export type { TempFile, UploadOptions, UploadResult } from './upload.js';
export type { Usage, UsageDetailsQuery, UsageEvent } from './usage-api.js';
export type { WebhookCreate } from './webhooks-api.js';
