import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { choiceConfidence, expectedLevel, normalize, round2, scoreConfidence, toWireAnswer } from './answers.ts';
import { toDecisionRequest, unwrapState } from './normalize.ts';

describe('System One answer semantics', () => {
  test('choice confidence is clip((k*pmax-1)/(k-1), 0, 1)', () => {
    assert.equal(choiceConfidence([0.25, 0.25, 0.25, 0.25]), 0);
    assert.equal(choiceConfidence([1, 0, 0]), 1);
    assert.ok(Math.abs(choiceConfidence([0.7, 0.2, 0.1]) - (3 * 0.7 - 1) / 2) < 1e-12);
  });

  test('score confidence is max(0, 1 - sum p_i|i-m| / MADu)', () => {
    // n = 3: MADu = (1 + 0 + 1) / 3
    const p = [0.2, 0.5, 0.3];
    const expected = 1 - (0.2 * 1 + 0.3 * 1) / (2 / 3);
    assert.ok(Math.abs(scoreConfidence(p) - expected) < 1e-12);
    assert.equal(scoreConfidence([0, 1, 0]), 1);
    assert.equal(scoreConfidence([0.5, 0, 0, 0, 0.5]), 0); // m = 0, spread 2 > MADu 1.2
  });

  test('expected level and rounding to 2 decimals', () => {
    assert.ok(Math.abs(expectedLevel([0.1, 0.2, 0.7]) - 1.6) < 1e-12);
    assert.equal(round2(0.125), 0.13);
    assert.equal(round2(1.005), 1.01);
    assert.equal(round2(0.994999), 0.99);
  });

  test('normalize rejects what is not a distribution', () => {
    assert.throws(() => normalize([0.5], 2), /1 probabilities for 2 options/);
    assert.throws(() => normalize([Number.NaN, 1], 2), /non-probability/);
    assert.throws(() => normalize([0, 0], 2), /all-zero/);
    assert.deepEqual(normalize([1, 3], 2), [0.25, 0.75]);
  });

  test('confidence is computed from unrounded probabilities', () => {
    const a = toWireAnswer({ type: 'choice', criteria: { a: null, b: null, c: null } }, [0.334, 0.333, 0.333]);
    assert.equal(a.type === 'choice' && a.confidence, round2((3 * 0.334 - 1) / 2));
  });

  test('noul answers P(true); choice picks the first maximum; score keys levels "0".."n-1"', () => {
    assert.deepEqual(toWireAnswer({ type: 'noul' }, [0.25, 0.75]), { type: 'noul', noul: 0.75, abstained: false });
    const c = toWireAnswer({ type: 'choice', criteria: { x: null, y: 'why' } }, [0.5, 0.5]);
    assert.equal(c.type === 'choice' && c.choice, 'x');
    const s = toWireAnswer({ type: 'score', criteria: ['lo', 'hi'] }, [0.3, 0.7]);
    assert.deepEqual(s, {
      type: 'score',
      score: 0.7,
      confidence: round2(scoreConfidence([0.3, 0.7])),
      legend: { '0': 'lo', '1': 'hi' },
      probabilities: { '0': 0.3, '1': 0.7 },
      abstained: false,
    });
  });

  test('an answer within 0.02 of uniform on every option is marked abstained, and only such an answer', () => {
    const noul = (p: number) => toWireAnswer({ type: 'noul' }, [1 - p, p]).abstained;
    assert.equal(noul(0.5), true);
    assert.equal(noul(0.52), true);
    assert.equal(noul(0.525), false);
    const choice = (ps: number[]) => toWireAnswer({ type: 'choice', criteria: { a: null, b: null, c: null } }, ps);
    assert.equal(choice([1 / 3, 1 / 3, 1 / 3]).abstained, true);
    assert.equal(choice([0.35, 0.33, 0.32]).abstained, true);
    assert.equal(choice([0.36, 0.33, 0.31]).abstained, false);
    const score = toWireAnswer({ type: 'score', criteria: ['lo', 'mid', 'hi'] }, [0.2, 0.2, 0.6]);
    assert.equal(score.abstained, false);
  });

  test('AI SDK parts are unwrapped; other arrays stay JSON arrays', () => {
    assert.equal(unwrapState([{ type: 'text', text: 'a' }]), 'a');
    assert.deepEqual(unwrapState([{ type: 'json', value: { k: 1 } }]), { k: 1 });
    assert.equal(
      unwrapState([
        { type: 'text', text: 'a' },
        { type: 'json', value: { k: 1 } },
      ]),
      'a\n\n{"k":1}',
    );
    assert.deepEqual(unwrapState([{ type: 'note', text: 'a' }]), [{ type: 'note', text: 'a' }]);
    assert.deepEqual(unwrapState([1, 2]), [1, 2]);
  });

  test('the engine request: ids are gone, structured text is compact JSON, noul options are [false, true]', () => {
    const r = toDecisionRequest({ a: [1, 2] }, [
      { type: 'noul', instructions: { ask: 'x' }, criteria: { true: 'yes means', false: null } },
      { type: 'score', criteria: ['lo', { v: 'hi' }] },
    ]);
    assert.equal(r.state.text, '{"a":[1,2]}');
    assert.deepEqual(r.state.json, { a: [1, 2] });
    assert.equal(r.questions[0]?.instructions, '{"ask":"x"}');
    assert.deepEqual(r.questions[0]?.options, [
      { label: 'false', description: null },
      { label: 'true', description: 'yes means' },
    ]);
    assert.deepEqual(r.questions[1]?.options, [
      { label: '0', description: 'lo' },
      { label: '1', description: '{"v":"hi"}' },
    ]);
  });
});
