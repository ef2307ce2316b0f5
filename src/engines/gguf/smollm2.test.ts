/**
 * The GGUF engine on a real small instruct model, ../shared/models/SmolLM2-135M-Instruct.Q4_1.gguf
 * (skipped with a message without ../shared): label scoring on a real tokenizer and vocabulary.
 * These check mechanics (which tokens are scored, that cached and recomputed prefixes agree, that a
 * long option list fits), never answer quality: a 135M model is not judged here.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { SMOLLM2 } from '../../../test/fixtures/shared-models.ts';
import type { DecisionEngine } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { createGgufEngine } from './gguf-engine.ts';

const present = existsSync(SMOLLM2);

const opts = (labels: string[], descriptions: (string | null)[] = []) =>
  labels.map((label, i) => ({ label, description: descriptions[i] ?? null }));
const NOUL: DecisionQuestion = {
  type: 'noul',
  instructions: 'Is this text message spam?',
  options: opts(['false', 'true']),
};
const CHOICE: DecisionQuestion = {
  type: 'choice',
  instructions: 'Which team should handle this?',
  options: opts(['billing', 'tech', 'other'], ['charges and refunds', 'bugs and outages', null]),
};
const SCORE: DecisionQuestion = {
  type: 'score',
  instructions: 'How urgent is this?',
  options: opts(['0', '1', '2'], ['low', 'medium', 'high']),
};
const request = (text: string, questions: DecisionQuestion[]): DecisionRequest => ({
  state: { text, json: undefined },
  questions,
});
const STATE = 'I was charged twice for my subscription this month. Please refund one of the charges.';
const signal = () => new AbortController().signal;

describe('GGUF engine on SmolLM2-135M-Instruct (a real instruct model)', {
  skip: present ? false : `${SMOLLM2} is absent (../shared)`,
}, () => {
  let engine: DecisionEngine;
  let recompute: DecisionEngine;
  before(async () => {
    engine = createGgufEngine({ modelPath: SMOLLM2, threads: 1, contextSize: 4096 });
    recompute = createGgufEngine({
      modelPath: SMOLLM2,
      threads: 1,
      contextSize: 4096,
      reusePrefix: false,
      answerCacheEntries: 0,
    });
    await Promise.all([engine.load(), recompute.load()]);
  });
  after(async () => {
    await Promise.all([engine?.close(), recompute?.close()]);
  });

  test('each option label is one token of its vocabulary: yes/no, letters for choices, level numbers', async () => {
    const answer = await engine.answer(request(STATE, [NOUL, CHOICE, SCORE]), signal());
    // one scored token per option: No/Yes, the choice's short labels, the levels' digits
    assert.equal(answer.outputTokens, 2 + 3 + 3);
    for (const [i, p] of answer.probabilities.entries()) {
      assert.ok(
        p.every((x) => x > 0 && x < 1),
        `question ${i}: ${p}`,
      );
      assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    }
    // a real model's label probabilities are far from uniform (random weights' noise is not)
    assert.ok(
      answer.probabilities.some((p) => Math.max(...p) > 0.5),
      JSON.stringify(answer.probabilities),
    );
    const counts = await engine.countTokens(request(STATE, [NOUL]));
    assert.ok(counts.state > 20 && counts.state < 60, `state: ${counts.state} tokens`);
    assert.equal(
      answer.inputTokens,
      (await engine.countTokens(request(STATE, [NOUL, CHOICE, SCORE]))).questions.reduce((a, b) => a + b, counts.state),
    );
  });

  test('scores on the cached state prefix equal a full recompute exactly', async () => {
    const r = request(STATE, [NOUL, CHOICE, SCORE, { ...NOUL, instructions: 'Does the customer want money back?' }]);
    const cached = await engine.answer(r, signal());
    const full = await recompute.answer(r, signal());
    assert.deepEqual(cached.probabilities, full.probabilities);
  });

  test('a 60-option choice: two-letter labels past Z, each still one token', async () => {
    const labels = Array.from({ length: 60 }, (_, i) => `intent_${i}`);
    const q: DecisionQuestion = { type: 'choice', instructions: 'Which intent?', options: opts(labels) };
    const answer = await engine.answer(request('what is my account balance', [q]), signal());
    const p = answer.probabilities[0] ?? [];
    assert.equal(p.length, 60);
    assert.equal(answer.outputTokens, 60);
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
  });
});

describe('GGUF engine on SmolLM2-135M-Instruct in its chat template (promptFormat chat)', {
  skip: present ? false : `${SMOLLM2} is absent (../shared)`,
}, () => {
  let chat: DecisionEngine;
  let recompute: DecisionEngine;
  let plain: DecisionEngine;
  before(async () => {
    const base = { modelPath: SMOLLM2, threads: 1, contextSize: 2048 } as const;
    chat = createGgufEngine({ ...base, promptFormat: 'chat' });
    recompute = createGgufEngine({ ...base, promptFormat: 'chat', reusePrefix: false, answerCacheEntries: 0 });
    plain = createGgufEngine(base);
    await Promise.all([chat.load(), recompute.load(), plain.load()]);
  });
  after(async () => {
    await Promise.all([chat?.close(), recompute?.close(), plain?.close()]);
  });

  test('labels start the reply, one token each; the cached state prefix equals a full recompute', async () => {
    const r = request(STATE, [NOUL, CHOICE, SCORE]);
    const cached = await chat.answer(r, signal());
    assert.equal(cached.outputTokens, 2 + 3 + 3);
    assert.deepEqual(cached.probabilities, (await recompute.answer(r, signal())).probabilities);
    // the template's tokens are counted: the state and each question are longer than in plain text
    const [c, p] = await Promise.all([chat.countTokens(r), plain.countTokens(r)]);
    assert.ok(c.state > p.state, `state: chat ${c.state}, plain ${p.state}`);
    assert.equal(
      cached.inputTokens,
      c.questions.reduce((a, b) => a + b, c.state),
    );
  });

  test('the chat prompt is a different prompt: other numbers than plain text', async () => {
    const r = request(STATE, [NOUL, CHOICE, SCORE]);
    const [c, p] = await Promise.all([chat.answer(r, signal()), plain.answer(r, signal())]);
    assert.notDeepEqual(c.probabilities, p.probabilities);
  });
});
