import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mulberry32 } from '../lib/seeded.ts';
import { choiceConfidence, normalize, round2, scoreConfidence, toHundredths, toWireAnswer } from './answers.ts';
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

  test('rounding to 2 decimals', () => {
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

  test('confidence and score are computed from the rounded probabilities, as a client reading the answer would', () => {
    const a = toWireAnswer({ type: 'choice', criteria: { a: null, b: null, c: null } }, [0.334, 0.333, 0.333]);
    assert.ok(a.type === 'choice');
    assert.deepEqual(a.probabilities, { a: 0.34, b: 0.33, c: 0.33 });
    assert.equal(a.confidence, round2((3 * 0.34 - 1) / 2));
    const s = toWireAnswer({ type: 'score', criteria: ['lo', 'mid', 'hi'] }, [0.333, 0.334, 0.333]);
    assert.ok(s.type === 'score');
    assert.deepEqual(s.probabilities, { '0': 0.33, '1': 0.34, '2': 0.33 });
    assert.equal(s.score, 1);
    assert.equal(s.confidence, round2(scoreConfidence([0.33, 0.34, 0.33], 1)));
  });

  test('the examples of issue 32 now sum to exactly 1', () => {
    // 0.37, 0.17, 0.16, 0.06, 0.16, 0.06 rounded one by one (0.98), and a uniform 6-level score (0.17 x 6 = 1.02).
    assert.deepEqual(toHundredths([0.3749, 0.1649, 0.1649, 0.0649, 0.1649, 0.0655]), [38, 16, 16, 7, 16, 7]);
    assert.deepEqual(toHundredths(Array(6).fill(1 / 6)), [17, 17, 17, 17, 16, 16]);
    assert.deepEqual(toHundredths([0.29, 0.71]), [29, 71]);
    assert.deepEqual(toHundredths([1, 0, 0]), [100, 0, 0]);
  });

  test('noul answers P(true); choice picks the first maximum; score keys levels "0".."n-1"', () => {
    assert.deepEqual(toWireAnswer({ type: 'noul' }, [0.25, 0.75]), { type: 'noul', noul: 0.75, x_abstained: false });
    const c = toWireAnswer({ type: 'choice', criteria: { x: null, y: 'why' } }, [0.5, 0.5]);
    assert.equal(c.type === 'choice' && c.choice, 'x');
    const s = toWireAnswer({ type: 'score', criteria: ['lo', 'hi'] }, [0.3, 0.7]);
    assert.deepEqual(s, {
      type: 'score',
      score: 0.7,
      confidence: round2(scoreConfidence([0.3, 0.7])),
      legend: { '0': 'lo', '1': 'hi' },
      probabilities: { '0': 0.3, '1': 0.7 },
      x_abstained: false,
    });
  });

  test('an answer within 0.02 of uniform on every option is marked x_abstained, and only such an answer', () => {
    const noul = (p: number) => toWireAnswer({ type: 'noul' }, [1 - p, p]).x_abstained;
    assert.equal(noul(0.5), true);
    assert.equal(noul(0.52), true);
    assert.equal(noul(0.525), false);
    const choice = (ps: number[]) => toWireAnswer({ type: 'choice', criteria: { a: null, b: null, c: null } }, ps);
    assert.equal(choice([1 / 3, 1 / 3, 1 / 3]).x_abstained, true);
    assert.equal(choice([0.35, 0.33, 0.32]).x_abstained, true);
    assert.equal(choice([0.36, 0.33, 0.31]).x_abstained, false);
    const score = toWireAnswer({ type: 'score', criteria: ['lo', 'mid', 'hi'] }, [0.2, 0.2, 0.6]);
    assert.equal(score.x_abstained, false);
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

/** In integer hundredths, as the wire's 2-decimal numbers are meant: 0.07 is 7. */
const hundredths = (x: number) => Math.round(x * 100);

/** A random distribution over k options: peaked, flat, sparse (many zeros) or with tiny values, as engines give. */
function randomDistribution(random: () => number, k: number): number[] {
  const kind = Math.floor(random() * 5);
  const raw: number[] = Array.from({ length: k }, () => {
    if (kind === 0) return random();
    if (kind === 1) return random() ** 8; // peaked
    if (kind === 2) return random() < 0.7 ? 0 : random(); // sparse
    if (kind === 3) return 1 + random() * 1e-9; // nearly uniform
    return random() < 0.5 ? random() * 1e-4 : random(); // tiny values
  });
  if (!raw.some((x) => x > 0)) raw[0] = 1;
  return raw;
}

describe('rounded distributions (property, 20,000 random answers, 2 to 255 options)', () => {
  test('every choice and score distribution sums to exactly 1.00, each value within 0.01 of its unrounded probability, and choice, score and confidence agree with the rounded numbers', () => {
    const random = mulberry32(32);
    for (let round = 0; round < 20_000; round++) {
      const score = round % 2 === 1;
      const k = score ? 2 + Math.floor(random() * 9) : 2 + Math.floor(random() * 254);
      const raw = randomDistribution(random, k);
      const p = normalize(raw, k);
      const labels = Array.from({ length: k }, (_, i) => `o${i}`);
      const answer = score
        ? toWireAnswer({ type: 'score', criteria: labels }, raw)
        : toWireAnswer({ type: 'choice', criteria: Object.fromEntries(labels.map((l) => [l, null])) }, raw);
      assert.ok(answer.type !== 'noul');
      const values = Object.values(answer.probabilities);
      const h = values.map(hundredths);
      const sum = h.reduce((a, b) => a + b, 0);
      assert.equal(sum, 100, `k=${k}: sum ${sum / 100} for ${JSON.stringify(raw)}`);
      values.forEach((v, i) => {
        assert.equal(v, (h[i] ?? 0) / 100, 'a value is exactly 2 decimals');
        assert.ok(Math.abs(v - (p[i] ?? 0)) < 0.01 + 1e-12, `option ${i}: ${v} for ${p[i]}`);
      });
      const top = Math.max(...h);
      if (answer.type === 'choice') {
        assert.equal(
          hundredths(answer.probabilities[answer.choice] ?? -1),
          top,
          'choice has the largest rounded value',
        );
        assert.equal(answer.confidence, round2(choiceConfidence(values)));
      } else {
        const expected = h.reduce((a, x, i) => a + i * x, 0);
        assert.equal(hundredths(answer.score), expected, 'score is the expectation of the rounded probabilities');
        const mode = h.indexOf(top);
        const fromMode = (m: number) => round2(scoreConfidence(values, m));
        assert.ok(
          h.some((x, m) => x === top && fromMode(m) === answer.confidence),
          `confidence ${answer.confidence} is the formula at a most likely level (first: ${fromMode(mode)})`,
        );
      }
    }
  });
});
