import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  answeredBy,
  describeAnsweredBy,
  describeTie,
  fromBody,
  fromHash,
  preference,
  shareHash,
  snippets,
  toBody,
} from '../../console/src/playground-model.ts';
import { teacherModel } from '../../src/systemone/serve.ts';

describe('playground: what an answer prefers', () => {
  test('a unique top probability is chosen', () => {
    assert.deepEqual(
      preference([
        { label: 'billing', p: 0.91 },
        { label: 'tech', p: 0.07 },
        { label: 'other', p: 0.02 },
      ]),
      { kind: 'chosen', label: 'billing' },
    );
    assert.deepEqual(
      preference([
        { label: 'yes', p: 0.51 },
        { label: 'no', p: 0.49 },
      ]),
      { kind: 'chosen', label: 'yes' },
    );
  });

  test('a uniform answer has no preference (noul 0.5, a third per level)', () => {
    assert.deepEqual(
      preference([
        { label: 'yes', p: 0.5 },
        { label: 'no', p: 0.5 },
      ]),
      { kind: 'tied', labels: ['yes', 'no'], p: 0.5 },
    );
    assert.deepEqual(
      preference([
        { label: '0: low', p: 0.33 },
        { label: '1: medium', p: 0.33 },
        { label: '2: high', p: 0.33 },
      ]),
      { kind: 'tied', labels: ['0: low', '1: medium', '2: high'], p: 0.33 },
    );
  });

  test('the top two level at 2 decimals is a tie, whatever the rest', () => {
    assert.deepEqual(
      preference([
        { label: 'billing', p: 0.39 },
        { label: 'tech', p: 0.39 },
        { label: 'other', p: 0.23 },
      ]),
      { kind: 'tied', labels: ['billing', 'tech'], p: 0.39 },
    );
  });

  test('an answer that says it abstained has no information, whatever its rounded numbers show', () => {
    const rows = [
      { label: 'yes', p: 0.51 },
      { label: 'no', p: 0.49 },
    ];
    assert.deepEqual(preference(rows, true), { kind: 'abstained' });
    assert.deepEqual(preference(rows, false), { kind: 'chosen', label: 'yes' });
  });

  test('no options: nothing is chosen', () => {
    assert.deepEqual(preference([]), { kind: 'tied', labels: [], p: 0 });
  });

  test('a tie is described by its labels, or by their count past four', () => {
    assert.equal(describeTie(['yes', 'no'], 0.5), 'yes and no are tied at 0.50');
    assert.equal(describeTie(['a', 'b', 'c'], 0.33), 'a, b and c are tied at 0.33');
    assert.equal(describeTie(['a', 'b', 'c', 'd', 'e'], 0.2), '5 options are tied at 0.20');
  });
});

describe('playground: the model a request names (an adapter) is kept', () => {
  const body = {
    model: 'ft:brier-lite-4.2.0:3f9a1c2b7d4e',
    state: 'Please refund the duplicate charge.',
    questions: { refund: { type: 'noul', instructions: 'Is the customer asking for money back?' } },
  };

  test('through JSON mode (a pasted body back to the form and out again) and a shared link', () => {
    const draft = fromBody(body);
    assert.equal(draft.model, body.model);
    assert.deepEqual(toBody(draft), body);
    assert.equal(fromHash(shareHash(draft))?.model, body.model);
    assert.throws(() => fromBody({ ...body, model: 3 }), /"model" must be a model id/);
  });

  test('in "call it from code": curl, TypeScript and Python send it', () => {
    const code = snippets('http://127.0.0.1:8080', toBody(fromBody(body)));
    for (const snippet of [code.curl, code.typescript, code.python]) {
      assert.match(snippet, /"model": ?"ft:brier-lite-4\.2\.0:3f9a1c2b7d4e"/);
    }
  });

  test('without one, the body names none (the server default)', () => {
    const { model: _, ...plain } = body;
    assert.equal('model' in toBody(fromBody(plain)), false);
  });
});

describe('playground: who answered each question (x_answered_by)', () => {
  const adapter = 'ft:brier-fake-3.0.0:0123456789ab';
  test('the adapter, its teacher, or the base model; nothing when the request named no adapter', () => {
    assert.deepEqual(answeredBy(adapter, adapter), { kind: 'adapter', id: adapter });
    assert.deepEqual(answeredBy(teacherModel('fixture'), adapter), { kind: 'teacher', id: 'fixture' });
    assert.deepEqual(answeredBy('brier-fake-3.0.0', adapter), { kind: 'base', id: 'brier-fake-3.0.0' });
    assert.equal(answeredBy(undefined, 'brier-fake-3.0.0'), null);
  });
  test('said in words, with the reason the base model or a teacher answered', () => {
    assert.equal(describeAnsweredBy({ kind: 'adapter', id: adapter }), `Answered by the adapter ${adapter}.`);
    assert.equal(
      describeAnsweredBy({ kind: 'teacher', id: 'fixture' }),
      'Answered by teacher fixture: the adapter was less sure than its fallback threshold.',
    );
    assert.equal(
      describeAnsweredBy({ kind: 'base', id: 'brier-fake-3.0.0' }),
      'Answered by the base model brier-fake-3.0.0: no template of the adapter matches this question.',
    );
  });
});
