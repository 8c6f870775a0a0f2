import { describe, expect, it } from 'vitest';
import { cachePrepared, Database } from '../../src/core/sqlite.js';

describe('cachePrepared', () => {
  it('compiles each SQL text once and answers fresh rows every time the statement runs', () => {
    const db = cachePrepared(new Database(':memory:'));
    db.prepare('CREATE TABLE t (v INTEGER)').run();
    const select = 'SELECT v FROM t ORDER BY v';
    const first = db.prepare(select);
    expect(db.prepare(select)).toBe(first);
    expect(db.prepare('SELECT count(*) AS n FROM t')).not.toBe(first);
    expect(db.prepare(select).all()).toEqual([]);
    db.prepare('INSERT INTO t (v) VALUES (?)').run(2);
    db.prepare('INSERT INTO t (v) VALUES (?)').run(1);
    expect(db.prepare(select).all()).toEqual([{ v: 1 }, { v: 2 }]);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
    db.close();
  });
});
