import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  csvToJsonl,
  DECIDING,
  inCsvTerms,
  jobOutlook,
  parseCsv,
  questionOf,
  reliabilityPoints,
  servingNote,
} from '../../console/src/teach-model.ts';
import { parseLabelledJsonl } from '../../src/systemone/examples.ts';
import { makeTestApp } from '../harness.ts';

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

test("CSV: the server's refusal is told in the CSV's terms (data rows, the label column), never the question id q", async () => {
  const t = await makeTestApp();
  try {
    const { jsonl } = csvToJsonl('state,label\nI was charged twice,billing\nthe app crashes,sales\n', {
      type: 'choice',
      instructions: 'Which team?',
      options: 'billing\ntech',
    });
    const res = await t.req('/control/v1/examples', {
      method: 'POST',
      body: jsonl,
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/jsonl' },
    });
    assert.equal(res.status, 422);
    const json = (await res.json()) as { message: string; detail: { msg: string }[] };
    const shown = [inCsvTerms(json.message), ...json.detail.map((d) => inCsvTerms(d.msg))];
    for (const m of shown) {
      assert.doesNotMatch(m, /labels\.q|questions\.q|\bq\b/, m);
      assert.match(
        m,
        /data row 2: the "label" column: must be one of the question's labels \("billing", "tech"\), got "sales"/,
      );
    }
  } finally {
    await t.close();
  }
});

test("a job's place in the queue and the time it should still take, in words", () => {
  const job = (status: string, queue_position: number | null, estimated_seconds: number | null) => ({
    status,
    queue_position,
    estimated_seconds,
  });
  assert.equal(jobOutlook(job('queued', 1, 42)), 'next in the queue · about 42 s left');
  assert.equal(jobOutlook(job('queued', 2, 200)), '2nd in the queue · about 3 min left');
  assert.equal(jobOutlook(job('queued', 13, null)), '13th in the queue');
  assert.equal(jobOutlook(job('queued', 23, 9000)), '23rd in the queue · about 3 h left');
  assert.equal(jobOutlook(job('running', null, 65)), 'about 65 s left');
  assert.equal(jobOutlook(job('running', null, null)), '');
  assert.equal(jobOutlook(job('succeeded', null, null)), '');
});

test('a template says what decided whether it is served, and which measures shown went the other way', () => {
  const m = (brier: number, nll: number, accuracy: number, ece: number) => ({ brier, nll, accuracy, ece });
  const rule =
    /^Served only where, on examples each answered by a fit that never saw it, both its Brier and its NLL are lower than the base model’s \(\*\), the Brier by more than chance \(a paired bootstrap’s 90% lower bound of the gain above 0\); otherwise the base model answers\./;
  // served, better everywhere: the rule alone
  const better = servingNote({ served: true, before: m(0.3, 1.1, 0.5, 0.2), after: m(0.2, 0.9, 0.7, 0.05) });
  assert.match(better, rule);
  assert.ok(!better.includes('worse'));
  // served with a worse accuracy and ECE: said, with both numbers
  assert.match(
    servingNote({ served: true, before: m(0.3, 1.1, 0.8, 0.05), after: m(0.2, 0.9, 0.7, 0.12) }),
    /Served with a worse accuracy 0\.700 against 0\.800, ECE 0\.120 against 0\.050\.$/,
  );
  // not served: the rule (its reason gives the numbers)
  assert.match(servingNote({ served: false, before: m(0.2, 0.9, 0.7, 0.1), after: m(0.3, 1.1, 0.8, 0.05) }), rule);
  // not fitted: nothing
  assert.equal(servingNote({ served: false, before: null, after: null }), '');
  // distilled: Brier and KL to the teacher decide
  const t = (agreement: number, kl: number, ece: number, accuracy: number | null) => ({
    agreement,
    brier: kl / 2,
    kl,
    ece,
    accuracy,
  });
  const distilled = servingNote({
    served: true,
    before: m(0.3, 1.1, 0.5, 0.2),
    after: m(0.2, 0.9, 0.7, 0.05),
    distill: { base: t(0.9, 0.4, 0.1, 0.8), adapter: t(0.85, 0.2, 0.1, 0.75) },
  });
  assert.match(distilled, /both its Brier and its KL to the teacher are lower/);
  assert.match(distilled, /Served with a worse agreement 0\.850 against 0\.900, accuracy 0\.750 against 0\.800\.$/);
  assert.deepEqual(DECIDING, { labelled: ['Brier', 'NLL'], distilled: ['Brier to the teacher', 'KL to the teacher'] });
});
