import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LabelTokenizer } from './labels.ts';
import { buildTrie, isPrefixFree, logSumExp, planLabels, softmax, spreadsheetLabel } from './labels.ts';

/** Greedy longest-match tokenizer over `pieces` (single characters always match), tokens as strings. */
function fakeTokenizer(pieces: readonly string[]): LabelTokenizer<string> {
  const vocab = new Set(pieces);
  return (label) => {
    const text = ` ${label}`;
    const tokens: string[] = [];
    let at = 0;
    while (at < text.length) {
      let end = text.length;
      while (end > at + 1 && !vocab.has(text.slice(at, end))) end--;
      tokens.push(text.slice(at, end));
      at = end;
    }
    return tokens;
  };
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
const bigVocab = [...LETTERS, ...LETTERS.flatMap((a) => LETTERS.map((b) => a + b))].map((l) => ` ${l}`);

test('spreadsheet labels run A..Z, AA..ZZ, AAA', () => {
  assert.deepEqual([0, 1, 25, 26, 27, 701, 702].map(spreadsheetLabel), ['A', 'B', 'Z', 'AA', 'AB', 'ZZ', 'AAA']);
});

test('natural labels are used when their tokens are prefix-free', () => {
  const plan = planLabels(2, ['No', 'Yes'], fakeTokenizer([' No', ' Yes']));
  assert.deepEqual(plan, { labels: ['No', 'Yes'], lead: [], sequences: [[' No'], [' Yes']] });
});

test('natural labels whose tokens are prefixes of each other fall back to letters', () => {
  const levels = Array.from({ length: 12 }, (_, i) => String(i));
  // " 1" is a prefix of " 1","0": the levels cannot be scored apart.
  const plan = planLabels(12, levels, fakeTokenizer([...bigVocab, ...levels.slice(0, 10).map((l) => ` ${l}`)]));
  assert.deepEqual(plan.labels, LETTERS.slice(0, 12));
  assert.ok(plan.sequences.every((s) => s.length === 1));
});

test('choice labels are A, B, C... when each letter is one token', () => {
  const plan = planLabels(5, null, fakeTokenizer(bigVocab));
  assert.deepEqual(plan.labels, ['A', 'B', 'C', 'D', 'E']);
  assert.deepEqual(plan.sequences, [[' A'], [' B'], [' C'], [' D'], [' E']]);
});

test('a token every label starts with moves into the lead and the labels become single tokens', () => {
  // SPM-like tiny vocabulary: a lone space piece, then the letter.
  const plan = planLabels(4, null, fakeTokenizer([' ']));
  assert.deepEqual(plan, { labels: ['A', 'B', 'C', 'D'], lead: [' '], sequences: [['A'], ['B'], ['C'], ['D']] });
});

test('more than 26 options in a big vocabulary use single-token letter pairs, skipping split ones', () => {
  const vocab = bigVocab.filter((piece) => piece !== ' AC');
  const plan = planLabels(255, null, fakeTokenizer(vocab));
  assert.equal(plan.labels.length, 255);
  assert.deepEqual(plan.labels.slice(24, 29), ['Y', 'Z', 'AA', 'AB', 'AD']);
  assert.ok(plan.sequences.every((s) => s.length === 1));
  assert.equal(new Set(plan.sequences.map((s) => s[0])).size, 255);
});

test('255 options in a character-level vocabulary get equal-length prefix-free multi-token labels', () => {
  const plan = planLabels(255, null, fakeTokenizer([' A', ' I']));
  assert.equal(plan.labels.length, 255);
  assert.deepEqual(plan.labels.slice(0, 3), ['AA', 'AB', 'AC']);
  assert.equal(plan.labels.at(-1), 'JU');
  assert.ok(isPrefixFree(plan.sequences));
  assert.ok(plan.sequences.some((s) => s.length === 2));
});

test('a single-letter set with mixed token lengths stays prefix-free', () => {
  // " I" is one token, the other letters are " " + letter: no shared lead, one inner trie node.
  const plan = planLabels(26, null, fakeTokenizer([' I', ' ']));
  assert.deepEqual(plan.labels, LETTERS);
  assert.deepEqual(plan.lead, []);
  assert.ok(isPrefixFree(plan.sequences));
  const trie = buildTrie(plan.sequences);
  assert.deepEqual(trie.map((n) => n.token).sort(), [' ', ' I']);
});

test('a question needs at least one option', () => {
  assert.throws(() => planLabels(0, null, fakeTokenizer(bigVocab)), RangeError);
});

test('prefix-freeness rejects empty, equal and prefix sequences', () => {
  assert.equal(isPrefixFree([['a'], ['b', 'c']]), true);
  assert.equal(isPrefixFree([['a'], ['a', 'c']]), false);
  assert.equal(isPrefixFree([['a'], ['a']]), false);
  assert.equal(isPrefixFree([[], ['a']]), false);
});

test('the trie has one leaf per option and shares prefixes', () => {
  const trie = buildTrie([['x', 'a'], ['x', 'b'], ['y']]);
  assert.deepEqual(trie, [
    {
      token: 'x',
      option: null,
      children: [
        { token: 'a', option: 0, children: [] },
        { token: 'b', option: 1, children: [] },
      ],
    },
    { token: 'y', option: 2, children: [] },
  ]);
});

test('softmax is stable for large scores and sums to 1', () => {
  const p = softmax([1000, 1000, 999]);
  assert.ok(Math.abs(p.reduce((a, b) => a + b) - 1) < 1e-12);
  assert.ok(Math.abs((p[0] ?? 0) - 1 / (2 + Math.exp(-1))) < 1e-12);
  assert.equal(logSumExp([Number.NEGATIVE_INFINITY]), Number.NEGATIVE_INFINITY);
});
