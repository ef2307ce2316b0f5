import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argmax } from './argmax.ts';

test('argmax returns the index of the largest entry', () => {
  assert.equal(argmax([0.1, 0.7, 0.2]), 1);
  assert.equal(argmax([-3, -1, -2]), 1);
});

test('argmax takes the first of tied maxima, so a tied choice answers with the first label', () => {
  assert.equal(argmax([0.2, 0.4, 0.4]), 1);
  assert.equal(argmax([0.5, 0.5]), 0);
});

test('argmax of an empty vector is 0', () => {
  assert.equal(argmax([]), 0);
});
