/** Option parsers shared by the commands: commander shows an InvalidArgumentError as a usage error. */
import { InvalidArgumentError } from 'commander';
import { parseDuration as durationMs } from '../config/units.js';

/** `30s`, `10m`, `2h`, `1d`, `500ms` or a bare number of milliseconds. */
export function parseDuration(text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new InvalidArgumentError(`not a duration: ${text} (try 30s, 10m, 2h)`);
  return ms;
}

export function parsePort(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new InvalidArgumentError(`not a port: ${text}`);
  }
  return n;
}

/** A positive, finite factor such as `10` or `0.5`. */
export function parseSpeed(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(`not a positive number: ${text}`);
  }
  return n;
}
