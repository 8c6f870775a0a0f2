export type { CallOptions } from './api-caller.js';
export { DocexClient, type DocexClientOptions } from './client.js';
export { API_ERROR_CODES, ApiError, isApiError } from './errors.js';
export type { JobCreated } from './jobs-api.js';
export type { ApiObserver } from './observer.js';
export type { DownloadUrl } from './sending-events-api.js';
export {
  DEFAULT_TIMEOUTS,
  type MtlsMaterial,
} from './transport.js';
