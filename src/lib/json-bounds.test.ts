import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkJsonText, type JsonBoundsProblem } from './json-bounds.ts';
import { mulberry32 } from './seeded.ts';

describe('checkJsonText', () => {
  test('a duplicate key anywhere is found with its path, the first in document order', () => {
    const dup = (text: string) => checkJsonText(text, 64);
    assert.deepEqual(dup('{"a":1,"a":2}'), { path: ['a'], kind: 'duplicate' });
    assert.deepEqual(dup('{"questions":{"a":{"type":"noul"},"a":{"type":"score","criteria":["x","y"]}}}'), {
      path: ['questions', 'a'],
      kind: 'duplicate',
    });
    assert.deepEqual(dup('{"s":[1,{"x":0},[{"k":1,"j":2,"k":3}]],"s":0}'), {
      path: ['s', 2, 0, 'k'],
      kind: 'duplicate',
    });
    // The same key in sibling objects, or as a value, is not a duplicate.
    assert.equal(dup('{"a":{"k":1},"b":{"k":1},"c":["a","a"],"d":"d"}'), null);
  });

  test('keys are compared decoded: an escaped spelling of a key is the same key', () => {
    assert.deepEqual(checkJsonText('{"ab":1,"\\u0061b":2}', 64), { path: ['ab'], kind: 'duplicate' });
    assert.deepEqual(checkJsonText('{"q\\"":1,"q\\u0022":2}', 64), { path: ['q"'], kind: 'duplicate' });
    assert.equal(checkJsonText('{"a\\\\":1,"a":2}', 64), null);
  });

  test('depth: the first container past the limit, with its path', () => {
    assert.equal(checkJsonText('[[["x"]]]', 3), null);
    assert.deepEqual(checkJsonText('[[["x"]]]', 2), { path: [0, 0], kind: 'depth' });
    assert.deepEqual(checkJsonText('{"a":[1,2,{"b":{}}]}', 3), { path: ['a', 2, 'b'], kind: 'depth' });
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    assert.equal(checkJsonText(deep, 64)?.kind, 'depth');
  });

  test('"__proto__" is refused as a key, not as a value', () => {
    assert.deepEqual(checkJsonText('{"s":{"__proto__":{}}}', 64), { path: ['s', '__proto__'], kind: 'key' });
    assert.deepEqual(checkJsonText('{"\\u005f_proto__":1}', 64), { path: ['__proto__'], kind: 'key' });
    assert.equal(checkJsonText('{"s":"__proto__","t":["__proto__"]}', 64), null);
  });

  test('property: on random JSON with random whitespace and escapes, the same problem as a recursive reference', () => {
    const random = mulberry32(32);
    const int = (n: number) => Math.floor(random() * n);
    for (let round = 0; round < 3000; round++) {
      const value = randomValue(int, 0);
      const text = render(value, int);
      assert.doesNotThrow(() => JSON.parse(text), text);
      const maxDepth = 1 + int(6);
      assert.deepEqual(checkJsonText(text, maxDepth), reference(value, maxDepth), text);
    }
  });
});

/** A JSON value whose objects are lists of entries, so that a key may appear twice. */
type Value = null | number | string | boolean | Value[] | { entries: [string, Value][] };

function randomValue(int: (n: number) => number, depth: number): Value {
  const kind = depth > 5 ? int(4) : int(7);
  if (kind === 0) return null;
  if (kind === 1) return int(2000) - 1000 + (int(2) ? 0.5 : 0);
  if (kind === 2) return ['a', 'b', '__proto__', 'x y', 'é"'][int(5)] ?? '';
  if (kind === 3) return int(2) === 1;
  if (kind === 4 || kind === 5) return Array.from({ length: int(4) }, () => randomValue(int, depth + 1));
  const keys = ['a', 'b', 'c', 'é', 'q"', '__proto__'];
  // Rarely a forbidden key, sometimes a repeated one.
  const pick = () => keys[int(100) < 3 ? 5 : int(5)] ?? 'a';
  return { entries: Array.from({ length: int(4) }, () => [pick(), randomValue(int, depth + 1)] as [string, Value]) };
}

/** JSON text with random whitespace, and keys sometimes spelled with \u escapes. */
function render(value: Value, int: (n: number) => number): string {
  const ws = () => [' ', '', '\n', '\t', ''][int(5)] ?? '';
  const key = (k: string) =>
    int(3) === 0
      ? `"${[...k].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`
      : JSON.stringify(k);
  if (value === null || typeof value !== 'object') return `${ws()}${JSON.stringify(value)}${ws()}`;
  if (Array.isArray(value)) return `${ws()}[${value.map((v) => render(v, int)).join(',')}${ws()}]`;
  return `{${value.entries.map(([k, v]) => `${ws()}${key(k)}${ws()}:${render(v, int)}`).join(',')}${ws()}}`;
}

/** The first problem in document order, by recursion over the value. */
function reference(value: Value, maxDepth: number, path: (string | number)[] = []): JsonBoundsProblem | null {
  if (value === null || typeof value !== 'object') return null;
  if (path.length + 1 > maxDepth) return { path, kind: 'depth' };
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = reference(v, maxDepth, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  const seen = new Set<string>();
  for (const [k, v] of value.entries) {
    if (k === '__proto__') return { path: [...path, k], kind: 'key' };
    if (seen.has(k)) return { path: [...path, k], kind: 'duplicate' };
    seen.add(k);
    const found = reference(v, maxDepth, [...path, k]);
    if (found) return found;
  }
  return null;
}
