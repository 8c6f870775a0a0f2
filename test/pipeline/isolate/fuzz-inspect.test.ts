/**
 * Mutated PDFs, ZIPs, CSVs and XMLs fed to the inspector under small worker limits (issue 16):
 * every answer is an acceptance or a refusal with a known code, never a crash of the task or of
 * the agent. Seeded: DOCEX_FUZZ_SEED=<n> replays a run; the seed is printed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INPUT_ERROR_CODES } from '../../../src/pipeline/inspect/codes.js';
import { Inspector } from '../../../src/pipeline/isolate/inspector.js';
import {
  csvBytes,
  makeZip,
  objectStreamBombPdf,
  pageTreeBombPdf,
  validPdf,
} from '../../fixtures/inputs/hostile.js';

const SEED = Number(process.env['DOCEX_FUZZ_SEED'] ?? 160_016);
const RUNS = 40;
const dir = mkdtempSync(path.join(tmpdir(), 'docex-fuzz-'));
const inspector = new Inspector({
  workers: 1,
  memory: 64 * 1024 ** 2,
  timeLimit: 10_000,
  limits: { pdfInflate: 4 * 1024 ** 2, xmlElements: 20_000, xmlAttributes: 20_000, csvColumns: 500 },
});
const seeds: Record<string, { name: string; source: string; bytes: Buffer }[]> = {};

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (DOCEX_FUZZ_SEED=${SEED} replays it), ${RUNS} runs per type`);
  const pdf = await validPdf(2);
  seeds['pdf'] = [
    { name: 'a.pdf', source: 'PDF', bytes: pdf },
    { name: 'tree.pdf', source: 'PDF', bytes: pageTreeBombPdf(24) },
    { name: 'objstm.pdf', source: 'PDF', bytes: objectStreamBombPdf(64 * 1024) },
  ];
  seeds['zip'] = [
    {
      name: 'b.zip',
      source: 'PDF',
      bytes: makeZip([
        { name: 'a.pdf', data: pdf },
        { name: 'b.pdf', data: pdf },
      ]),
    },
  ];
  seeds['csv'] = [
    {
      name: 'c.csv',
      source: 'PAYLOAD_WORD',
      bytes: csvBytes([
        ['EMAIL_ADDRESS', 'data.name', 'data.invoice.amount'],
        ['a@x.be', 'Ann', '10.00'],
        ['b@x.be', 'Bob', '20.00'],
      ]),
    },
  ];
  seeds['xml'] = [
    { name: 'd.xml', source: 'DATA_FILE', bytes: readFileSync('samples/data-file/customers.xml') },
    { name: 'u.xml', source: 'UBL', bytes: readFileSync('samples/ubl/invoice-base-example.xml') },
  ];
});
afterAll(async () => {
  await inspector.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A byte-level mutation: flip, overwrite with a structural token, delete or duplicate a slice. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('token' as const),
    at: fc.nat(),
    token: fc.constantFrom(
      '<<',
      '>>',
      '[',
      ']',
      ' 0 R',
      '/Kids',
      'stream\n',
      '"',
      ',',
      ';',
      '\n',
      '<',
      '/>',
      '=',
      '\u0000',
      '__proto__',
      'data.__proto__.x',
      '1e400',
      '\u202e',
    ),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({
    kind: fc.constant('repeat' as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 256 }),
    times: fc.integer({ min: 2, max: 50 }),
  }),
);
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(bytes: Buffer, steps: Mutation[]): Buffer {
  let out = Buffer.from(bytes);
  for (const m of steps) {
    const at = out.length === 0 ? 0 : m.at % out.length;
    if (m.kind === 'flip') out[at] = (out[at] ?? 0) ^ (1 << m.bit);
    else if (m.kind === 'token')
      out = Buffer.concat([out.subarray(0, at), Buffer.from(m.token), out.subarray(at)]);
    else if (m.kind === 'delete') out = Buffer.concat([out.subarray(0, at), out.subarray(at + m.length)]);
    else {
      const slice = out.subarray(at, at + m.length);
      out = Buffer.concat([out.subarray(0, at), ...Array<Buffer>(m.times).fill(slice), out.subarray(at)]);
    }
  }
  return out;
}

describe('fuzzed inspection', () => {
  it.each(['pdf', 'zip', 'csv', 'xml'])(
    'answers every mutated %s with an acceptance or a known refusal',
    async (type) => {
      let n = 0;
      const tally = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          fc.array(mutation, { minLength: 1, maxLength: 8 }),
          async (pick, steps) => {
            const list = seeds[type]!;
            const seed = list[pick % list.length]!;
            const fileName = `${n++}-${seed.name}`;
            const filePath = path.join(dir, fileName);
            writeFileSync(filePath, mutate(seed.bytes, steps));
            const answer = await inspector.run('inspectFile', fileName, {
              path: filePath,
              fileName,
              inputSourceType: seed.source,
              maxBytes: 64 * 1024 ** 2,
            });
            expect(typeof answer.ok).toBe('boolean');
            if (!answer.ok) expect(Object.keys(INPUT_ERROR_CODES)).toContain(answer.code);
            // inspectFile turns any exception into UNREADABLE: only an I/O error (with its errno) may be one.
            if (!answer.ok && answer.code === 'DOCEX_INPUT_UNREADABLE')
              expect(answer.details?.['errno'], answer.reason).toBeDefined();
            tally.set(answer.ok ? 'ok' : answer.code, (tally.get(answer.ok ? 'ok' : answer.code) ?? 0) + 1);
          },
        ),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      console.log(type, Object.fromEntries(tally));
    },
    120_000,
  );
});
