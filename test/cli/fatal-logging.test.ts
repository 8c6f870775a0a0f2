import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { FATAL_EXIT_CODE, installFatalLogging } from '../../src/cli/fatal-logging.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, log: pino({ level: 'info' }, destination) };
}

describe('fatal logging', () => {
  it('writes an uncaught error as one JSON fatal line, then exits with 70', () => {
    const { lines, log } = capture();
    const exits: number[] = [];
    const fatal = installFatalLogging(log, (code) => exits.push(code));
    try {
      fatal.onError(Object.assign(new Error('boom'), { code: 'EBOOM' }), 'uncaughtException');
    } finally {
      fatal.restore();
    }
    expect(exits).toEqual([FATAL_EXIT_CODE]);
    const line = JSON.parse(lines.at(-1)!);
    expect(line).toMatchObject({
      level: 60,
      origin: 'uncaughtException',
      code: 'EBOOM',
      err: { message: 'boom' },
    });
  });

  it('turns third-party text on standard error into JSON warn lines, and gives stderr back', () => {
    const { lines, log } = capture();
    const before = process.stderr.write;
    const fatal = installFatalLogging(log, () => {});
    try {
      // What console.warn from node-cron or pdf-lib ends in outside a test runner.
      process.stderr.write('Parsed number that is too large for some PDF readers: 1e99, not capping.\n');
    } finally {
      fatal.restore();
    }
    expect(process.stderr.write).toBe(before);
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      level: 40,
      stderr: 'Parsed number that is too large for some PDF readers: 1e99, not capping.',
    });
  });
});
