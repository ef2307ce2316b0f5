import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { yesNo as noul } from '../../../test/fixtures/questions.ts';
import { flattenState } from './flatten.ts';
import { detectQuotedStatement, detectStatePair, requestTexts, textsToEmbed } from './texts.ts';
import { chunkText, createEncoderTokenizer, createReferenceTokenizer } from './tokenizer.ts';

describe('state flattening', () => {
  it('renders JSON as path: value lines, strings verbatim', () => {
    const text = flattenState({
      user: { name: 'Ada', age: 36 },
      turns: ['hi', 'bye'],
      empty: [],
      ok: true,
      none: null,
    });
    assert.equal(text, 'user.name: Ada\nuser.age: 36\nturns[0]: hi\nturns[1]: bye\nempty: []\nok: true\nnone: null');
    assert.equal(flattenState('plain'), 'plain');
    assert.equal(flattenState([1, { a: 'x' }]), '[0]: 1\n[1].a: x');
  });

  it('requestTexts flattens JSON states and keeps string states verbatim', () => {
    const json = requestTexts({ state: { text: '{"a":{"b":"c"}}', json: { a: { b: 'c' } } }, questions: [] });
    assert.equal(json.state, 'a.b: c');
    const str = requestTexts({ state: { text: 'hello', json: undefined }, questions: [] });
    assert.equal(str.state, 'hello');
  });
});

describe('structure detection', () => {
  it('finds two-part states', () => {
    assert.deepEqual(detectStatePair('Sentence 1: A cat sits.\nSentence 2: A dog runs.'), [
      'A cat sits.',
      'A dog runs.',
    ]);
    assert.deepEqual(detectStatePair('Question: why?\nPassage: because.'), ['why?', 'because.']);
    assert.equal(detectStatePair('Statement: x\nSpeaker: y\nContext: z'), null);
    assert.equal(detectStatePair('Product variant: Black\nReview: great'), null);
    assert.equal(detectStatePair('just text'), null);
  });

  it('finds a statement quoted in the instructions', () => {
    assert.equal(
      detectQuotedStatement(
        'Does this text imply that the following statement is true: "Christopher Reeve had an accident"?',
      ),
      'Christopher Reeve had an accident',
    );
    assert.equal(detectQuotedStatement('Is this "spam"?'), null);
    const rt = requestTexts({
      state: { text: 'Dana Reeve died.', json: undefined },
      questions: [noul('Does this text imply "Dana Reeve is dead today"?')],
    });
    assert.deepEqual(rt.questions[0]?.pair, ['Dana Reeve died.', 'Dana Reeve is dead today']);
  });
});

describe('option texts', () => {
  it('noul reads the instruction and the true/false descriptions, never bare yes/no', () => {
    const rt = requestTexts({
      state: { text: 's', json: undefined },
      questions: [noul('Is it spam?'), noul('Is it spam?', 'unsolicited ads', 'a normal message')],
    });
    assert.deepEqual(rt.questions[0]?.options, [null, 'Is it spam?']);
    assert.deepEqual(rt.questions[1]?.options, ['Is it spam?\na normal message', 'Is it spam?\nunsolicited ads']);
  });

  it('choice reads label and description; score reads the level text', () => {
    const rt = requestTexts({
      state: { text: 's', json: undefined },
      questions: [
        {
          type: 'choice',
          instructions: 'Intent?',
          options: [
            { label: 'book_flight', description: null },
            { label: 'Sci/Tech', description: 'science' },
          ],
        },
        {
          type: 'score',
          instructions: 'How good?',
          options: [
            { label: '0', description: 'bad' },
            { label: '1', description: 'good' },
          ],
        },
      ],
    });
    assert.deepEqual(rt.questions[0]?.options, ['book flight', 'Sci/Tech: science']);
    assert.deepEqual(rt.questions[1]?.options, ['bad', 'good']);
    assert.deepEqual(
      new Set(textsToEmbed(rt)),
      new Set([
        's',
        'Intent?',
        'book flight',
        'Sci/Tech: science',
        'How good?',
        'bad',
        'good',
        // the frames the skill model places each question by (skill.ts)
        'Intent?\nSci/Tech, book flight',
        'How good?\nbad / good',
      ]),
    );
  });
});

describe('chunking long texts', () => {
  const tokenizer = createEncoderTokenizer();
  it('counts tokens exactly as the encoder library tokenizes', () => {
    assert.equal(tokenizer.count(''), 0);
    assert.ok(tokenizer.count('hello world') >= 2);
    const reference = createReferenceTokenizer();
    for (const text of [
      'hello world',
      ' leading and  double  spaces ',
      'WINNER!! You have won a £1000 cash prize. Call 09061701461 now',
      'ünïcödé ✓ 😀 中文 ｆｕｌｌｗｉｄｔｈ',
      'user.name: Ada\nturns[0]: hi',
      'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    ]) {
      assert.deepEqual(tokenizer.encode(text), reference(text), text);
    }
  });

  it('splits into windows that cover every character, each within the window', () => {
    const text = Array.from({ length: 120 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`).join(' ');
    const long = `${text}\n${'x'.repeat(700)}\n${text}`;
    const chunks = chunkText(long, tokenizer.count, 64);
    assert.ok(chunks.length > 3);
    assert.equal(chunks.join(''), long);
    for (const c of chunks) assert.ok(tokenizer.count(c) <= 64, `chunk of ${tokenizer.count(c)} tokens`);
    assert.deepEqual(chunkText('short text', tokenizer.count, 64), ['short text']);
  });

  it('balances the windows: an even number of about the same size, no short tail', () => {
    const text = Array.from({ length: 30 }, (_, i) => `Sentence number ${i} talks about topic ${i % 7}.`).join(' ');
    const total = tokenizer.count(text);
    const chunks = chunkText(text, tokenizer.count, 64);
    assert.equal(chunks.join(''), text);
    assert.equal(chunks.length, Math.ceil(Math.ceil(total / 64) / 2) * 2, `${total} tokens`);
    const sizes = chunks.map((c) => tokenizer.count(c));
    assert.ok(Math.max(...sizes) <= 64);
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 12, `sizes ${sizes.join(', ')}`);
  });
});
