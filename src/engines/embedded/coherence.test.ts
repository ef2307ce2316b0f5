import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { yesNo as noul } from '../../../test/fixtures/questions.ts';
import type { DecisionQuestion } from '../request.ts';
import { linkQuestions, namedOption, reconcile } from './coherence.ts';

const topics: DecisionQuestion = {
  type: 'choice',
  instructions: 'Which topic?',
  options: [
    { label: 'World', description: null },
    { label: 'Sports', description: null },
    { label: 'Sci/Tech', description: null },
    { label: 'other', description: null },
  ],
};
const stars: DecisionQuestion = {
  type: 'score',
  instructions: 'How many stars?',
  options: ['1 star', '2 stars', '3 stars', '4 stars', '5 stars'].map((d, i) => ({ label: String(i), description: d })),
};
const sentiment: DecisionQuestion = {
  type: 'score',
  instructions: 'Sentiment?',
  options: ['very negative', 'negative', 'neutral', 'positive', 'very positive'].map((d, i) => ({
    label: String(i),
    description: d,
  })),
};

describe('namedOption', () => {
  it('finds the one option a yes/no question names', () => {
    assert.equal(namedOption('Is this about sports?', topics), 1);
    assert.equal(namedOption('Is it sci tech news?', topics), 2);
    assert.equal(namedOption('Is it at least 4 stars?', stars), 3);
  });
  it('prefers the longer phrase and refuses none, several or a generic label', () => {
    assert.equal(namedOption('Is it positive?', sentiment), 3);
    assert.equal(namedOption('Is it very positive?', sentiment), 4);
    assert.equal(namedOption('Is it about the weather?', topics), null);
    assert.equal(namedOption('Is it about sports or world news?', topics), null);
    assert.equal(namedOption('Is it about something other than that?', topics), null);
  });
  it('finds an option by its whole description, however long, and not by a part of it', () => {
    const questionTypes: DecisionQuestion = {
      type: 'choice',
      instructions: 'What does the question ask for?',
      options: [
        { label: 'NUM', description: 'a number, date, amount, distance, price...' },
        { label: 'HUM', description: 'a person, group or organization' },
        { label: 'LOC', description: 'a place' },
      ],
    };
    assert.equal(namedOption('Is this about a number, date, amount, distance, price...?', questionTypes), 0);
    assert.equal(namedOption('Is this about a person, group or organization?', questionTypes), 1);
    assert.equal(namedOption('Is this about a person?', questionTypes), null);
    const relatedness: DecisionQuestion = {
      type: 'score',
      instructions: 'How related are the two sentences?',
      options: ['1 - unrelated', '3 - somewhat related', '5 - very closely related / same meaning'].map((d, i) => ({
        label: String(i),
        description: d,
      })),
    };
    assert.equal(namedOption('Is it at least 5 - very closely related / same meaning?', relatedness), 2);
  });
});

describe('linkQuestions + reconcile', () => {
  it('answers a named option with its probability, its negation with the complement', () => {
    const qs = [topics, noul('Is this about sports?'), noul('Is this not about sports?'), noul('Is it urgent?')];
    const links = linkQuestions(qs);
    assert.equal(links[3], null);
    const out = reconcile(links, [
      [0.1, 0.6, 0.2, 0.1],
      [0.5, 0.5],
      [0.5, 0.5],
      [0.3, 0.7],
    ]);
    assert.deepEqual(out[1], [0.4, 0.6]);
    assert.ok(Math.abs((out[2]?.[1] ?? 0) - 0.4) < 1e-12);
    assert.deepEqual(out[3], [0.3, 0.7]);
    assert.deepEqual(out[0], [0.1, 0.6, 0.2, 0.1]);
  });
  it('answers "at least" and "at most" a level with the cumulative probability', () => {
    const qs = [stars, noul('Is it at least 4 stars?'), noul('Is it 2 stars or less?'), noul('Is it 3 stars?')];
    const p = [0.1, 0.1, 0.2, 0.3, 0.3];
    const out = reconcile(linkQuestions(qs), [p, [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]);
    assert.ok(Math.abs((out[1]?.[1] ?? 0) - 0.6) < 1e-12);
    assert.ok(Math.abs((out[2]?.[1] ?? 0) - 0.2) < 1e-12);
    assert.ok(Math.abs((out[3]?.[1] ?? 0) - 0.2) < 1e-12);
  });
});
