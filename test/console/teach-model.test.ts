import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvToJsonl, parseCsv, questionOf, reliabilityPoints } from '../../console/src/teach-model.ts';
import { parseLabelledJsonl } from '../../src/systemone/examples.ts';

test('CSV: quoted fields with commas, doubled quotes and line breaks; CRLF; blank lines and a BOM skipped', () => {
  const text =
    '\uFEFFstate,label\r\n"charged twice, please refund","billing"\r\n\r\n"she said ""crash""\nagain",tech\n';
  assert.deepEqual(parseCsv(text), [
    ['state', 'label'],
    ['charged twice, please refund', 'billing'],
    ['she said "crash"\nagain', 'tech'],
  ]);
});

test('a CSV upload becomes JSON Lines the server accepts, one line per data row, for the question of the form', () => {
  const csv = 'id,State,Label\n1,I was charged twice,billing\n2,The app crashes,tech\n';
  const { jsonl, rows } = csvToJsonl(csv, {
    type: 'choice',
    instructions: 'Which team?',
    options: 'billing: money\ntech\n',
  });
  assert.equal(rows, 2);
  const parsed = parseLabelledJsonl(jsonl);
  assert.equal(parsed.length, 2);
  assert.deepEqual(parsed[0]?.questions[0]?.question, {
    type: 'choice',
    instructions: 'Which team?',
    criteria: { billing: 'money', tech: null },
  });
  assert.equal(parsed[1]?.questions[0]?.label, 'tech');
  // yes/no columns for noul, indices or level texts for score.
  const noul = csvToJsonl('state,label\na,yes\nb,0\n', { type: 'noul', instructions: 'Spam?', options: '' });
  assert.deepEqual(
    parseLabelledJsonl(noul.jsonl).map((r) => r.questions[0]?.label),
    ['true', 'false'],
  );
  const score = csvToJsonl('state,label\na,2\nb,low\n', { type: 'score', instructions: '', options: 'low\nmid\nhigh' });
  assert.deepEqual(
    parseLabelledJsonl(score.jsonl).map((r) => r.questions[0]?.label),
    ['2', '0'],
  );
  assert.deepEqual(questionOf({ type: 'score', instructions: ' ', options: 'a\nb' }), {
    type: 'score',
    criteria: ['a', 'b'],
  });
});

test('a CSV without state and label columns is refused, naming the columns it has', () => {
  assert.throws(
    () => csvToJsonl('text,answer\nx,y\n', { type: 'noul', instructions: '', options: '' }),
    /needs a "state" and a "label" column; it has "text", "answer"/,
  );
});

test('reliability points are the bins that have examples', () => {
  const bins = [
    { lo: 0, hi: 0.5, n: 0, confidence: 0, accuracy: 0 },
    { lo: 0.5, hi: 1, n: 3, confidence: 0.7, accuracy: 0.66 },
  ];
  assert.deepEqual(reliabilityPoints(bins), [{ x: 0.7, y: 0.66, n: 3 }]);
});
