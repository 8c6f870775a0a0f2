/**
 * Value types the configuration schema is built from. Each accepts what a person writes in YAML
 * and what `${env:NAME}` substitution yields (always text), and outputs one plain type.
 */
import cron from 'node-cron';
import { z } from 'zod';
import {
  BYTE_SIZE_PATTERN,
  DURATION_PATTERN,
  formatByteSize,
  formatDuration,
  parseByteSize,
  parseDuration,
  parseRate,
  RATE_PATTERN,
} from './units.js';

// prefault (not default): the default goes through the transform and shows as `2s` in the docs.
/** Milliseconds; the YAML may say `2s`, `10m`, `2h`, `1d`, `500ms` or a number of milliseconds. */
export function durationMs(defaultMs: number) {
  return z
    .union([
      z.number().int().nonnegative(),
      z.string().regex(DURATION_PATTERN, 'expected a duration such as 500ms, 2s, 10m, 2h or 1d'),
    ])
    .transform((v) => (typeof v === 'number' ? v : (parseDuration(v) ?? 0)))
    .prefault(formatDuration(defaultMs));
}

/** How long files are kept: `90d`, `12h` (any duration) or `off` (kept forever, the default); off is undefined. */
export function retention() {
  return z
    .union([
      z.literal('off'),
      z.number().int().positive(),
      z.string().regex(DURATION_PATTERN, 'expected off or a duration such as 90d'),
    ])
    .transform((v) => (v === 'off' ? undefined : typeof v === 'number' ? v : (parseDuration(v) ?? 0)))
    .refine((v) => v === undefined || v > 0, 'must be longer than 0 (or off)')
    .prefault('off');
}

/** Calls per period: `600/min`, `10/s`, `5000/h`, or `off` (the default; off is undefined). */
export function rateOrOff() {
  return z
    .union([
      z.literal('off'),
      z.string().regex(RATE_PATTERN, 'expected off or a rate such as 600/min or 10/s'),
    ])
    .transform((v) => (v === 'off' ? undefined : parseRate(v)))
    .prefault('off');
}

/** Bytes; the YAML may say `100MiB`, `1GB`, `512KiB` or a number of bytes. */
export function byteSize(defaultBytes: number) {
  return z
    .union([
      z.number().int().positive(),
      z
        .string()
        .regex(BYTE_SIZE_PATTERN, 'expected a size such as 512KiB, 100MiB, 1GiB or a number of bytes'),
    ])
    .transform((v) => (typeof v === 'number' ? v : (parseByteSize(v) ?? 0)))
    .refine((v) => v > 0, 'must be more than 0 bytes')
    .prefault(formatByteSize(defaultBytes));
}

/** Text that came through `${env:NAME}` is a string: accept digits where a number is expected. */
function numericText(value: unknown): unknown {
  return typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
}

// The preprocessed types take their default through prefault: a plain default on a preprocess
// is left out of the JSON Schema (and so of the documented example).

/** A whole number from `min` to `max`. */
export function count(min: number, max: number, defaultValue: number) {
  return z.preprocess(numericText, z.number().int().min(min).max(max)).prefault(defaultValue);
}

/** A whole number from `min` to `max`, or `off` (the default; off is undefined). */
export function countOrOff(min: number, max: number) {
  return z
    .preprocess(numericText, z.union([z.literal('off'), z.number().int().min(min).max(max)]))
    .transform((v) => (v === 'off' ? undefined : v))
    .prefault('off');
}

/** `auto` (the default) or a whole number from `min` to `max`. */
export function countOrAuto(min: number, max: number) {
  return z
    .preprocess(numericText, z.union([z.literal('auto'), z.number().int().min(min).max(max)]))
    .prefault('auto');
}

/** A positive number (may have decimals). */
export function positiveNumber(defaultValue: number) {
  return z.preprocess(numericText, z.number().positive()).prefault(defaultValue);
}

/** true/false; also the text `true`/`false` that an `${env:NAME}` yields. */
export function flag(defaultValue: boolean) {
  return z
    .preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean())
    .prefault(defaultValue);
}

/** A path; relative paths are resolved against the folder of the configuration file. */
export function pathText() {
  return z.string().min(1, 'must not be empty');
}

/** A secret value: write it as `${env:NAME}` or `${file:PATH}`, never inline. */
export function secretText() {
  return z.string().min(1, 'must not be empty');
}

/** An https:// URL (the service is only reached over TLS). */
export function httpsUrl() {
  return z.url({ protocol: /^https$/, error: 'expected an https:// URL' });
}

/** A node-cron expression (5 fields, or 6 with seconds first); numeric fields, ranges, steps, names. */
export function cronExpression(defaultValue: string) {
  return z
    .string()
    .refine(
      (v) => cron.validate(v),
      'expected a cron expression such as */5 * * * * (minute hour day month weekday)',
    )
    .default(defaultValue);
}
