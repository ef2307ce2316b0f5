import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { yesNo as noul } from '../../../test/fixtures/questions.ts';
import type { DecisionQuestion } from '../request.ts';
import { plainWording, readQuestion, sideOf } from './reading.ts';

const score = (instructions: string, levels: string[]): DecisionQuestion => ({
  type: 'score',
  instructions,
  options: levels.map((d, i) => ({ label: String(i), description: d })),
});
const choice = (instructions: string, labels: string[]): DecisionQuestion => ({
  type: 'choice',
  instructions,
  options: labels.map((label) => ({ label, description: null })),
});

describe('plainWording', () => {
  const pairs: [string, string][] = [
    ['Is this not about sports?', 'Is this about sports?'],
    ["Isn't the customer angry?", 'Is the customer angry?'],
    ['Does the customer not want a refund?', 'Does the customer want a refund?'],
    ["Doesn't this text concern billing?", 'Does this text concern billing?'],
    ['Does the message fail to mention the price?', 'Does the message mention the price?'],
    ['Has the user never paid?', 'Has the user paid?'],
    ['Is the customer no longer interested?', 'Is the customer interested?'],
    ['Is the order without problems?', 'Is the order with problems?'],
    ["Can't the user log in?", 'Can the user log in?'],
    ["Won't they renew?", 'Will they renew?'],
    ['Is there no mention of price?', 'Is there mention of price?'],
    ['Does the review lack detail?', 'Does the review have detail?'],
  ];
  for (const [negated, plain] of pairs)
    it(`reads "${negated}" as the negation of "${plain}"`, () => {
      assert.deepEqual(plainWording(negated), { plain, negated: true });
      assert.deepEqual(plainWording(plain), { plain, negated: false });
    });

  it('counts double negations as plain', () => {
    assert.deepEqual(plainWording("Doesn't this email lack a signature?"), {
      plain: 'Does this email have a signature?',
      negated: false,
    });
    assert.equal(plainWording('Is the author not unhappy?').negated, true);
  });

  it('does not read "or not", "whether or not" or a quoted statement as a negation', () => {
    for (const text of [
      'Is this spam or not?',
      'Say whether or not the user is a bot.',
      'Does this text imply that "the man is not happy"?',
      'Not only is it long; is it about sport?',
      'Is this about out of scope (The request does not match any of the other intents)?',
    ])
      assert.equal(plainWording(text).negated, false, text);
    assert.equal(plainWording('Is this not about billing (charges and refunds)?').negated, true);
  });
});

describe('readQuestion', () => {
  it('reads polarity and its side from yes/no wordings, antonyms included', () => {
    const cases: [string, number][] = [
      ['Is this movie review positive?', 1],
      ['Is the sentiment of this text positive?', 1],
      ['Is the customer angry?', -1],
      ['Is the customer calm?', 1],
      ['Is the customer unhappy?', -1],
      ['Is the customer satisfied?', 1],
      ['Is this a complaint?', -1],
      ['Does the review praise the product?', 1],
    ];
    for (const [text, side] of cases) {
      const r = readQuestion(noul(text), false);
      assert.equal(r.family, 'polarity', text);
      assert.equal(r.direction, side, text);
    }
  });

  it('reads a negated question as the negation of its plain wording, with the plain side', () => {
    const r = readQuestion(noul("Isn't the customer angry?"), false);
    assert.deepEqual([r.family, r.direction, r.negated, r.plain], ['polarity', -1, true, 'Is the customer angry?']);
  });

  it('reads topics, spam, pairs and what the encoders cannot read', () => {
    assert.equal(readQuestion(noul('Is this about sports?'), false).family, 'topic');
    assert.equal(readQuestion(noul('Does the customer want a refund?'), false).family, 'topic');
    assert.equal(
      readQuestion(noul('Is this sentence a subjective opinion rather than an objective statement of fact?'), false)
        .family,
      'topic',
    );
    assert.equal(readQuestion(noul('Is this email spam?'), false).family, 'spam');
    assert.equal(readQuestion(noul('Is this a phishing attempt?'), false).family, 'spam');
    assert.equal(readQuestion(noul('Do these two sentences say the same thing?'), true).family, 'pair');
    assert.equal(readQuestion(noul('Do these two sentences say the same thing?'), false).family, 'topic');
    assert.equal(readQuestion(noul('Is this tweet offensive?'), false).family, 'other');
    assert.equal(readQuestion(noul('Is this statement true?'), false).family, 'other');
    assert.equal(readQuestion(noul('Is this tweet ironic?'), false).family, 'other');
    assert.equal(readQuestion(noul(''), false).family, 'other');
  });

  it('reads polarity scales from their levels, their words or stars, with their direction', () => {
    const s = (i: string, l: string[]) => readQuestion(score(i, l), false);
    assert.deepEqual(
      [s('How would you rate it?', ['very negative', 'negative', 'neutral', 'positive', 'very positive'])].map((r) => [
        r.family,
        r.direction,
      ]),
      [['polarity', 1]],
    );
    assert.equal(s('How angry is the customer?', ['calm', 'annoyed', 'furious']).direction, -1);
    assert.equal(s('What star rating did the customer give?', ['1 star', '2 stars', '3 stars']).family, 'polarity');
    assert.equal(s('How urgent is this ticket?', ['low', 'medium', 'high']).family, 'other');
    assert.equal(s('Rate the urgency of this ticket.', ['low', 'medium', 'high']).family, 'other');
    assert.equal(s('Rate the register of this text.', ['informal', 'neutral', 'formal']).family, 'other');
    assert.equal(s('How truthful is this statement?', ['false', 'half true', 'true']).family, 'other');
  });

  it('reads a choice between sides as a polarity with each option on its side', () => {
    const r = readQuestion(choice('What is the sentiment?', ['negative', 'neutral', 'positive']), false);
    assert.deepEqual([r.family, r.optionSides], ['polarity', [-1, 0, 1]]);
    assert.equal(readQuestion(choice('Which topic?', ['World', 'Sports', 'Business']), false).family, 'topic');
    assert.equal(readQuestion(choice('Which is true?', ['A', 'B']), false).family, 'other');
  });

  it('names sides in phrases', () => {
    assert.equal(sideOf('a happy customer'), 1);
    assert.equal(sideOf('an unhappy customer'), -1);
    assert.equal(sideOf('happy or unhappy'), 0);
    assert.equal(sideOf('the invoice'), 0);
  });
});
