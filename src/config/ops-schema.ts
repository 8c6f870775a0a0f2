/**
 * The operations endpoints: /healthz, /readyz and /metrics on one HTTP listener, loopback by
 * default (they say what the agent does, not who it works for, but nothing outside needs them).
 */
import { z } from 'zod';
import { flag } from './schema-types.js';

export const DEFAULT_OPS_LISTEN = '127.0.0.1:9464';

const LISTEN_PATTERN = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/;

export interface ListenAddress {
  host: string;
  port: number;
}

/** `host:port` or `[v6]:port` to its parts; undefined when malformed or the port is out of range. */
export function parseListen(text: string): ListenAddress | undefined {
  const m = LISTEN_PATTERN.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65_535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/** An address to listen on: `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464` (port 0: any free port). */
export function listenAddress(defaultValue: string) {
  return z
    .string()
    .refine((v) => parseListen(v) !== undefined, 'expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464')
    .transform((v) => parseListen(v)!)
    .prefault(defaultValue);
}

export const opsSchema = z
  .strictObject({
    enabled: flag(true).describe('Serve /healthz, /readyz and /metrics while the agent runs.'),
    listen: listenAddress(DEFAULT_OPS_LISTEN).describe(
      'Address of the endpoints. Loopback by default; 0.0.0.0:9464 for a container or a remote Prometheus.',
    ),
    metrics: flag(true).describe('Serve Prometheus metrics at /metrics.'),
  })
  .prefault({})
  .describe(
    'Health and metrics endpoints for systemd, container health checks and Prometheus (docex-agent start only).',
  );

export type OpsConfig = z.output<typeof opsSchema>;
