import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededUnitVector } from '../../../test/fixtures/embedded.ts';
import { frameText, type SkillModel, skillOf, withSkill } from './skill.ts';

const yesNo = [
  { label: 'false', description: null },
  { label: 'true', description: null },
];

describe('frameText', () => {
  it('masks quoted content, so questions that only mention different things share one frame', () => {
    const a = frameText('noul', 'Does this sentence answer the question "Who won the 1998 World Cup?"?', yesNo);
    const b = frameText('noul', 'Does this sentence answer the question "What is the capital of Peru?"?', yesNo);
    assert.equal(a, b);
    assert.equal(a, 'Does this sentence answer the question "…"?');
  });

  it("keeps a choice's option names and a score's level texts (what kind of answer is asked for)", () => {
    const choice = frameText('choice', 'How does the hypothesis relate to the premise?', [
      { label: 'entailment', description: null },
      { label: 'neutral_stance', description: 'neither' },
    ]);
    assert.equal(choice, 'How does the hypothesis relate to the premise?\nentailment, neutral stance');
    const score = frameText('score', 'How polite is this request?', [
      { label: '0', description: 'rude' },
      { label: '1', description: null },
      { label: '2', description: 'polite' },
    ]);
    assert.equal(score, 'How polite is this request?\nrude / 1 / polite');
  });

  it("lists a choice's options in one order whatever their order in the question, a score's levels in theirs", () => {
    const options = ['refund', 'billing', 'Shipping', 'other'].map((label) => ({ label, description: null }));
    const frame = frameText('choice', 'Which team?', options);
    assert.equal(frame, 'Which team?\nShipping, billing, other, refund');
    assert.equal(frameText('choice', 'Which team?', options.toReversed()), frame);
    const levels = ['low', 'high'].map((description, i) => ({ label: String(i), description }));
    assert.notEqual(frameText('score', 'How urgent?', levels), frameText('score', 'How urgent?', levels.toReversed()));
  });

  it("reads a yes/no question's `true` description as part of what it asks", () => {
    const f = frameText('noul', 'Is it spam?', [
      { label: 'false', description: null },
      { label: 'true', description: 'unsolicited advertising' },
    ]);
    assert.equal(f, 'Is it spam?\nunsolicited advertising');
  });
});

describe('skillOf and withSkill', () => {
  const near = seededUnitVector(1);
  const far = seededUnitVector(2);
  const model: SkillModel = {
    sharpness: 20,
    prior: 0.1,
    quantile: 0.5,
    floor: 0.1,
    units: [
      { name: 'skilled/own', type: 'noul', centroid: near, skill: 0.9, weight: 1 },
      { name: 'choice/own', type: 'choice', centroid: far, skill: 1, weight: 1 },
    ],
  };

  it("gives a question close to a measured kind that kind's skill, unless the prior outweighs it", () => {
    assert.equal(skillOf(model, 'noul', near), 0.9);
    assert.equal(skillOf({ ...model, prior: 2 }, 'noul', near), 0);
  });

  it('gives the weaker skill where like kinds disagree, the lower the quantile', () => {
    const twin = { name: 'unskilled/own', type: 'noul' as const, centroid: near, skill: 0.05, weight: 1 };
    const split = { ...model, prior: 0.01, units: [...model.units, twin] };
    assert.equal(skillOf({ ...split, quantile: 0.3 }, 'noul', near), 0.05);
    assert.equal(skillOf({ ...split, quantile: 0.9 }, 'noul', near), 0.9);
  });

  it('gives a question unlike every measured kind of its type (or without words) no skill', () => {
    assert.ok(skillOf(model, 'noul', far) < 0.01);
    assert.equal(skillOf(model, 'noul', null), 0);
    assert.equal(skillOf(model, 'score', near), 0, 'no unit of its type');
  });

  it('keeps s of the departure from uniform, and answers uniform below the floor', () => {
    assert.deepEqual(withSkill([0.2, 0.8], 0.5, 0.1), [0.35, 0.65]);
    assert.deepEqual(withSkill([0.2, 0.8], 0.05, 0.1), [0.5, 0.5]);
    assert.deepEqual(withSkill([0.1, 0.2, 0.7], 1, 0.1), [0.1, 0.2, 0.7]);
  });
});
