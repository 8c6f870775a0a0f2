import { describe, expect, it } from 'vitest';
import {
  checkJsonDepth,
  inspectJsonBytes,
  jsonNestingDepth,
  MAX_JSON_DEPTH,
} from '../../../src/pipeline/inspect/index.js';

const nested = (depth: number) => `{"a":${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}}`;

describe('JSON nesting depth', () => {
  it.each([
    ['{}', 1],
    ['[1, [2, {"a": [3]}]]', 4],
    ['"[[[["', 0],
    ['{"s": "\\"[[[[\\\\", "t": [1]}', 2],
    [nested(5), 5],
  ])('counts %s as %i levels, ignoring brackets inside strings', (text, depth) => {
    expect(jsonNestingDepth(text)).toBe(depth);
  });

  it('stops counting once over the limit', () => {
    expect(jsonNestingDepth(nested(100_000), 10)).toBe(11);
  });

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses one more as DOCEX_INPUT_JSON_MALFORMED`, () => {
    expect(checkJsonDepth(nested(MAX_JSON_DEPTH), 'ok.json')).toBeUndefined();
    expect(checkJsonDepth(nested(MAX_JSON_DEPTH + 1), 'deep.json')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_JSON_MALFORMED',
      reason: `"deep.json" nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep.`,
    });
  });

  it('refuses a payload request nested 100,000 deep before anything recurses over it', () => {
    const text = `{"payload":{"templateData":{"deep":${'['.repeat(100_000)}1${']'.repeat(100_000)}}}}`;
    expect(inspectJsonBytes(Buffer.from(text), 'request.json')).toMatchObject({
      ok: false,
      code: 'DOCEX_INPUT_JSON_MALFORMED',
    });
  });

  it('still takes an ordinary request', () => {
    const text = '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com"}]}}';
    expect(inspectJsonBytes(Buffer.from(text), 'request.json')).toEqual({ ok: true, details: { items: 1 } });
  });
});
