import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { yesNo } from '../../../test/fixtures/questions.ts';
import type { DecisionEngine } from '../engine.ts';
import type { DecisionRequest } from '../request.ts';
import { ENCODER_WINDOW } from './embedder.ts';
import { dot } from './features.ts';
import { createEmbeddedEngine } from './index.ts';
import { createEncoderPool } from './pool.ts';
import { createEncoderTokenizer } from './tokenizer.ts';

/** The shipped model end to end: USE-lite in two worker threads + the committed artifact. */
describe('embedded engine with the real encoder', () => {
  let engine: DecisionEngine;
  before(async () => {
    engine = createEmbeddedEngine({ threads: 2 });
    await engine.load();
  });
  after(async () => {
    await engine.close();
  });
  const spam = (text: string): DecisionRequest => ({
    state: { text, json: undefined },
    questions: [
      yesNo('Is this text message spam?'),
      {
        type: 'choice',
        instructions: 'Which topic is this about?',
        options: [
          { label: 'sports', description: 'sports, games and athletes' },
          { label: 'money', description: 'prizes, cash, payments and offers' },
          { label: 'family', description: 'family and friends' },
        ],
      },
    ],
  });

  it('separates a spam message from a personal one, and answers deterministically', async () => {
    const signal = new AbortController().signal;
    const a = await engine.answer(
      spam('WINNER!! You have won a £1000 cash prize. Call 09061701461 now to claim, T&C apply.'),
      signal,
    );
    const b = await engine.answer(spam("Hey, are we still on for dinner tonight? I'll bring the kids."), signal);
    const pa = a.probabilities[0]?.[1] ?? 0;
    const pb = b.probabilities[0]?.[1] ?? 1;
    assert.ok(pa > pb + 0.3, `P(spam) ${pa} vs ${pb}`);
    assert.ok(
      (a.probabilities[1]?.[1] ?? 0) > (a.probabilities[1]?.[0] ?? 1),
      'money beats sports for the prize message',
    );
    const again = await engine.answer(
      spam('WINNER!! You have won a £1000 cash prize. Call 09061701461 now to claim, T&C apply.'),
      signal,
    );
    assert.deepEqual(again.probabilities, a.probabilities);
  });

  it('reads every token of a full window: the encoder itself truncates past ~129 tokens', async () => {
    // The embedder never hands the encoder more than ENCODER_WINDOW tokens; this checks the encoder
    // still reads the last of them (with a 256-token window it did not: the vector ignored the end).
    const pool = createEncoderPool({ threads: 1 });
    try {
      const tokenizer = createEncoderTokenizer();
      const words = 'customer refund order arrived late damaged support replied slowly parcel'.split(' ');
      let text = '';
      for (let i = 0; tokenizer.count(`${text}${words[i % words.length]} weather`) <= ENCODER_WINDOW; i++)
        text += `${words[i % words.length]} `;
      const a = `${text}weather`;
      const b = `${text}physics`;
      const n = tokenizer.count(a);
      assert.ok(n <= ENCODER_WINDOW && n >= ENCODER_WINDOW - 2, `${n} tokens`);
      const [va, vb] = await pool.embed([a, b]);
      assert.ok(va && vb);
      const cos = dot(va, vb);
      assert.ok(cos < 0.9999, `the last token changed nothing (cos ${cos})`);
    } finally {
      await pool.close();
    }
  });

  it('embeds a long state without truncating it (several windows)', async () => {
    const text = Array.from(
      { length: 60 },
      (_, i) => `Paragraph ${i}: the shipment was delayed again at the port.`,
    ).join('\n');
    const res = await engine.answer(spam(text), new AbortController().signal);
    assert.ok((await engine.countTokens(spam(text))).state > 512);
    assert.equal(res.probabilities.length, 2);
  });

  const ask = async (state: string, questions: DecisionRequest['questions']): Promise<number[][]> =>
    (await engine.answer({ state: { text: state, json: undefined }, questions }, new AbortController().signal))
      .probabilities;

  it('answers the yes/no questions of issue 31 informatively: sentiment, refunds, negation (brier-lite 4)', async () => {
    const loved = 'The movie was wonderful, I loved every minute of it.';
    const hated = 'The movie was dreadful, I hated every minute of it.';
    const [[, pLoved = 0] = []] = await ask(loved, [yesNo('Is the sentiment of this text positive?')]);
    const [[, pHated = 1] = []] = await ask(hated, [yesNo('Is the sentiment of this text positive?')]);
    assert.ok(pLoved > 0.6 && pHated < 0.4, `P(positive) ${pLoved} vs ${pHated}`);
    const [[, notPositive = 0] = []] = await ask(loved, [yesNo('Is the sentiment of this text not positive?')]);
    assert.ok(Math.abs(notPositive - (1 - pLoved)) < 1e-9, 'the negated wording is the complement');
    const refund = 'I was charged twice for my subscription. Please refund one.';
    const [[, pRefund = 0] = []] = await ask(refund, [yesNo('Is the customer asking for money back?')]);
    const [[, pOther = 1] = []] = await ask('What time does the store open on Sunday?', [
      yesNo('Is the customer asking for money back?'),
    ]);
    // brier-lite 4.1 keeps the share of a topic yes/no answer's departure from uniform that such kinds of
    // question earned held out (skill.ts): informative, less sure than 4.0 (0.77)
    assert.ok(pRefund > 0.55 && pRefund > pOther + 0.05, `P(refund) ${pRefund} vs ${pOther}`);
    // the console playground's own example (console/src/playground-model.ts) answers its refund question
    const playground = 'I was charged twice for my subscription this month. Please refund one of the charges.';
    const [[, pPlayground = 0] = []] = await ask(playground, [yesNo('Is the customer asking for money back?')]);
    assert.ok(pPlayground > 0.55 && pPlayground > pOther + 0.05, `P(refund) in the playground ${pPlayground}`);
  });
});
