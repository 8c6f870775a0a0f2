import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NamesProfile } from '../domain/names-profile.js';
import type { WebhookEventType } from '../domain/wire.js';
import type { UploadReader } from './content/upload-reader.js';
import type { Router } from './http.js';
import type { Store } from './store.js';

/**
 * The sandbox's clock: real time (or an injected clock) plus an offset the control API moves
 * forward, so a test or a demo can cross the 2-hour upload window at once.
 */
export class SandboxClock implements Clock {
  private offsetMs = 0;
  constructor(private readonly base: Clock) {}
  now(): number {
    return this.base.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

export interface SandboxSettings {
  /** How long a job waits for its file before it is deleted (the specification says 2 hours). */
  uploadWindowMs: number;
  /** Sending events move through their states this many times faster than at speed 1. */
  speed: number;
  /** Largest upload accepted (413 above). */
  maxUploadBytes: number;
  /** Validity of pre-signed download URLs (10 minutes). */
  downloadUrlValidityMs: number;
  /** The names it speaks: the specification's or the live service's reference (names-profile.ts). */
  names: NamesProfile;
}

/** A webhook event, before it is fanned out to the company's subscriptions. */
export interface SandboxEvent {
  type: WebhookEventType;
  companyId: string;
  data: Record<string, unknown>;
}

/** Signs and checks the pre-signed URLs of the files host (uploads and downloads). */
export interface UrlSigner {
  /** Full URL on the files host for `path`, valid until `expiresAt` (epoch ms). */
  sign(path: string, expiresAt: number): string;
  /** Checks the signature and expiry of a request to the files host; throws HttpProblem 403. */
  verify(pathWithQuery: string): { path: string; expiresAt: number };
}

export interface SandboxUrls {
  api: string;
  auth: string;
  files: string;
  control: string;
  /** Interface B (partner administration): server TLS only, its own token endpoint. */
  admin?: string;
}

export interface SandboxContext {
  store: Store;
  clock: SandboxClock;
  log: Logger;
  settings: SandboxSettings;
  urls: SandboxUrls;
  signer: UrlSigner;
  /** Folder of uploaded files and generated documents. */
  blobDir: string;
  /** Reads uploaded files in worker threads, under a memory cap and a time limit. */
  uploadReader: UploadReader;
  /** Queues a webhook event for every enabled subscription of the company that wants it. */
  emit(event: SandboxEvent): void;
  /** Unique ids, readable and sortable by creation: `job_…`, `se_…`. */
  newId(prefix: string): string;
}

/** A group of routes; each registers itself on the router of the host it belongs to. */
export type RouteModule = (router: Router, ctx: SandboxContext) => void;
