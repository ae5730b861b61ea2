import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../src/bounded-map';

describe('BoundedMap', () => {
  it('holds at most maxEntries: the entry set longest ago makes room, a touched one stays', () => {
    const map = new BoundedMap<string, number>({ maxEntries: 3 });
    for (const [k, v] of [['a', 1], ['b', 2], ['c', 3]] as const) map.set(k, v);
    map.touch('a');
    map.set('d', 4);
    expect(['a', 'b', 'c', 'd'].map((k) => map.get(k))).toEqual([1, undefined, 3, 4]);
    map.set('c', 30); // setting again makes it the newest
    map.set('e', 5);
    expect(['a', 'c', 'd', 'e'].map((k) => map.get(k))).toEqual([undefined, 30, 4, 5]);
  });

  it('holds at most maxBytes of the sizes given, counting a replaced or deleted entry out', () => {
    const map = new BoundedMap<string, string>({ maxEntries: 100, maxBytes: 10 });
    map.set('a', 'x', 4);
    map.set('b', 'y', 4);
    map.set('a', 'z', 2); // replaces: 4 + 2
    expect(map.bytes).toBe(6);
    map.set('c', 'w', 5); // 11 > 10: 'b', the oldest, goes
    expect([map.get('a'), map.get('b'), map.get('c'), map.bytes]).toEqual(['z', undefined, 'w', 7]);
    map.delete('a');
    expect(map.bytes).toBe(5);
    map.set('huge', 'v', 50); // larger than the whole budget: it alone is kept
    expect([map.get('a'), map.get('c'), map.get('huge'), map.bytes]).toEqual([undefined, undefined, 'v', 50]);
    map.clear();
    expect([map.get('huge'), map.bytes]).toEqual([undefined, 0]);
  });
});
