/**
 * What comes back from the service without being asked for a file: incoming Peppol documents
 * (polled into an inbox folder) and signed webhook deliveries (a receiver that makes polling sooner).
 */
import { z } from 'zod';
import { DocexError } from '../core/errors.js';
import { outputTargetSchema, stateOutputDefault } from './output-schema.js';
import { byteSize, count, cronExpression, durationMs, flag, secretText } from './schema-types.js';

export const peppolInboxSchema = z
  .strictObject({
    enabled: flag(true).describe('Poll the incoming Peppol documents and save them for the ERP.'),
    target: outputTargetSchema
      .prefault(stateOutputDefault('peppol-inbox'))
      .describe(
        'Where each document lands as <senderId>_<documentNumber>_<id>.xml with a .json summary beside it (written after the XML).',
      ),
    schedule: cronExpression('*/5 * * * *').describe(
      'When to poll (node-cron expression, local time). A peppol.document.received webhook polls at once.',
    ),
    overlapMs: durationMs(15 * 60_000).describe(
      'Each poll lists from the newest document seen minus this overlap, so a document the service records late is still found; ids already saved are skipped.',
    ),
    quietWhileWebhooksMs: durationMs(3_600_000).describe(
      'While webhooks arrive (one within this time), a scheduled poll runs only when the last poll is at least this old: polling stays on as the safety net, less often.',
    ),
    pageSize: count(1, 1000, 100).describe('Documents per list request.'),
  })
  .prefault({})
  .describe('Incoming Peppol documents (e-invoices and credit notes sent to this company).');

const LISTEN_PATTERN = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

export const webhooksSchema = z
  .strictObject({
    enabled: flag(false).describe(
      'Start the webhook receiver. Webhooks only make things sooner: polling stays on.',
    ),
    listen: z
      .string()
      .regex(LISTEN_PATTERN, 'expected host:port, e.g. 127.0.0.1:8090')
      .default('127.0.0.1:8090')
      .describe(
        'Address of the plain-HTTP receiver; keep it on loopback behind the reverse proxy that terminates TLS.',
      ),
    path: z
      .string()
      .regex(/^\/[\w./-]*$/, 'expected a path such as /docex/webhooks')
      .default('/docex/webhooks')
      .describe('URL path the deliveries are posted to; anything else answers 404.'),
    maxBodyBytes: byteSize(256 * 1024).describe(
      'A larger delivery is refused with 413 before it is read to the end.',
    ),
    toleranceMs: durationMs(5 * 60_000).describe(
      'A delivery whose webhook-timestamp is further than this from our clock is refused (replays).',
    ),
    secrets: z
      .array(secretText())
      .default([])
      .describe(
        `Signing secrets (whsec_…) besides those that "docex-agent webhooks create|reset-secret" keeps in <stateDir>/webhook-secrets/; write \${env:NAME} or \${file:PATH}. A delivery is accepted when one of its signatures matches one secret, so a secret can rotate.`,
      ),
  })
  .prefault({})
  .describe('The receiver of signed webhook deliveries (Standard Webhooks).');

export type PeppolInboxConfig = z.output<typeof peppolInboxSchema>;
export type WebhooksConfig = z.output<typeof webhooksSchema>;

/** `127.0.0.1:8090` / `[::1]:8090` → host and port. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = LISTEN_PATTERN.exec(listen);
  if (!m) throw new DocexError('DOCEX_CONFIG_INVALID', `not host:port: ${listen}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
