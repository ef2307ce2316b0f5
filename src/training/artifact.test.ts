import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFloats } from '../engines/embedded/artifacts.ts';
import { encodeFloats } from './artifact.ts';

describe('artifact writing', () => {
  it('encodes float32 matrices as the artifact reader decodes them, a view into a larger buffer included', () => {
    const all = Float32Array.from([9, 1.5, -2, 3.25e-8, 7]);
    const view = all.subarray(1, 4);
    assert.deepEqual([...decodeFloats(encodeFloats(view), 3, 'view')], [...view]);
    assert.deepEqual([...decodeFloats(encodeFloats(all), 5, 'all')], [...all]);
  });
});
