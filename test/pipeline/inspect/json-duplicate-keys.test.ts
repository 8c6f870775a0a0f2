import { describe, expect, it } from 'vitest';
import { findDuplicateKeys, MAX_JSON_DEPTH } from '../../../src/pipeline/inspect/json.js';

describe('findDuplicateKeys', () => {
  it('finds nothing in JSON without repeated keys, the same key in sibling objects included', () => {
    const text = JSON.stringify([
      {
        payload: {
          channelIdentifiers: [
            { kind: 'EMAIL_ADDRESS', value: 'a' },
            { kind: 'X', value: 'b' },
          ],
        },
      },
      { payload: { templateData: { a: { a: { a: 1 } } } } },
    ]);
    expect(findDuplicateKeys(text)).toEqual([]);
  });

  it('names the item, the path and the key of a key repeated in one object', () => {
    const text =
      '[{"payload":{"templateData":{}}},' +
      '{"payload":{"channelIdentifiers":[{"kind":"EMAIL_ADDRESS","value":"a@example.com","value":"b@example.com"}]}}]';
    expect(findDuplicateKeys(text)).toEqual([
      { item: 2, path: ['payload', 'channelIdentifiers', 0, 'value'], key: 'value' },
    ]);
  });

  it('counts a single object as item 1', () => {
    expect(findDuplicateKeys('{"jobName":"a","payload":{},"jobName":"b"}')).toEqual([
      { item: 1, path: ['jobName'], key: 'jobName' },
    ]);
  });

  it('decodes escaped keys before comparing them, as JSON.parse does', () => {
    const text = '{"templateData":{"value":"shown","\\u0076alue":"sent"}}';
    expect(JSON.parse(text).templateData.value).toBe('sent');
    expect(findDuplicateKeys(text)).toEqual([{ item: 1, path: ['templateData', 'value'], key: 'value' }]);
  });

  it('is not fooled by quotes, braces, commas and escaped backslashes inside strings', () => {
    const text = '{"a":"x\\"y,\\"a\\":{","b":"c:\\\\","c":["{\\"a\\":1}",",",{"a":1}],"d":{"a":"}"}}';
    expect(() => JSON.parse(text)).not.toThrow();
    expect(findDuplicateKeys(text)).toEqual([]);
    expect(findDuplicateKeys(text.replace('"d":', '"a":'))).toEqual([{ item: 1, path: ['a'], key: 'a' }]);
  });

  it('tracks array indexes through nested arrays', () => {
    const text = '[{"t":[[1,2],[{"k":1},{"k":1,"k":2}]]}]';
    expect(findDuplicateKeys(text)).toEqual([{ item: 1, path: ['t', 1, 1, 'k'], key: 'k' }]);
  });

  it('finds a key repeated as deep as the JSON depth limit allows, and stops after `max` findings', () => {
    const depth = MAX_JSON_DEPTH - 1;
    const deep = `${'{"n":'.repeat(depth)}{"k":1,"k":2}${'}'.repeat(depth)}`;
    const [found] = findDuplicateKeys(deep);
    expect(found?.path).toHaveLength(depth + 1);
    const many = `{${Array.from({ length: 500 }, () => '"k":1').join(',')}}`;
    expect(findDuplicateKeys(many, 10)).toHaveLength(10);
  });

  it('scans a 4 MiB array of 40,000 requests in one pass', () => {
    const item = JSON.stringify({ payload: { templateData: { name: 'x'.repeat(60), amount: '1' } } });
    const text = `[${Array(40_000).fill(item).join(',')},{"payload":{"a":1,"a":2}}]`;
    expect(findDuplicateKeys(text)).toEqual([{ item: 40_001, path: ['payload', 'a'], key: 'a' }]);
  });
});
