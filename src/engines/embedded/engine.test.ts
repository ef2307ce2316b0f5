import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fakeEncoder, fakeMiniLm, hash32ForTests, seededUnitVectorFromText } from '../../../test/fixtures/embedded.ts';
import { modelDirWithoutSkill } from '../../../test/fixtures/model-dir.ts';
import { yesNo } from '../../../test/fixtures/questions.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { createEmbedder } from './embedder.ts';
import { createEmbeddedEngine, EMBEDDED_LIMITS, EMBEDDED_MODEL_ID } from './index.ts';
import type { TextEncoder } from './pool.ts';
import { createEncoderTokenizer } from './tokenizer.ts';

const choice = (k: number, described = true): DecisionQuestion => ({
  type: 'choice',
  instructions: 'Which one?',
  options: Array.from({ length: k }, (_, j) => ({
    label: `option_${j}`,
    description: described ? `the ${j}th thing` : null,
  })),
});
const score = (k: number): DecisionQuestion => ({
  type: 'score',
  instructions: 'How much?',
  options: Array.from({ length: k }, (_, j) => ({ label: String(j), description: `level ${j}` })),
});
const noul = yesNo('Is it urgent?', 'needs action today');

const request = (
  questions: DecisionQuestion[],
  text = 'The server is down and customers cannot pay.',
): DecisionRequest => ({
  state: { text, json: undefined },
  questions,
});
const signal = (): AbortSignal => new AbortController().signal;

describe('embedded engine (fake encoder)', () => {
  it('reports its id and limits and loads idempotently', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    assert.equal(engine.info.id, EMBEDDED_MODEL_ID);
    assert.match(engine.info.id, /^brier-lite-4\.\d+\.\d+$/);
    assert.deepEqual(engine.limits, EMBEDDED_LIMITS);
    assert.equal(engine.ready(), false);
    await Promise.all([engine.load(), engine.load()]);
    assert.equal(engine.ready(), true);
    await engine.close();
    assert.equal(engine.ready(), false);
  });

  it('is not ready (so /healthz stays 503) until the encoder has answered its warm-up call', async () => {
    const encoder = fakeEncoder();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const engine = createEmbeddedEngine({
      encoder: {
        ...encoder,
        async embed(texts) {
          await gate;
          return encoder.embed(texts);
        },
      },
      miniLm: fakeMiniLm(),
    });
    const loading = engine.load();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(engine.ready(), false, 'ready while the warm-up call is still running');
    release();
    await loading;
    assert.equal(engine.ready(), true);
    await engine.close();
  });

  it('refuses a JSON state whose path: value rendering is past the character bound, without rendering it all', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    await engine.load();
    // ~120 KB of JSON: 2,000 leaves under a 60-character path each render to ~150 KB of lines.
    const deep = { ['k'.repeat(60)]: Array.from({ length: 2000 }, (_, i) => ({ [`v${i}`]: 'x'.repeat(40) })) };
    const json = { ...request([noul]), state: { text: JSON.stringify(deep), json: deep } };
    await assert.rejects(engine.countTokens(json), /state: read as path: value lines it is over 65536 characters/);
    await engine.close();
  });

  it('answers every question type and size with proper distributions', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const qs = [noul, choice(2), choice(255), choice(7, false), score(2), score(10)];
    const res = await engine.answer(request(qs), signal());
    assert.equal(res.probabilities.length, qs.length);
    res.probabilities.forEach((p, i) => {
      assert.equal(p.length, qs[i]?.options.length);
      assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
      for (const v of p) assert.ok(v > 0 && v < 1);
    });
    assert.ok(res.inputTokens > 0);
    assert.equal(res.outputTokens, 0);
    await engine.close();
  });

  it('choice answers do not depend on option order', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const q = choice(6);
    const reversed: DecisionQuestion = { ...q, options: [...q.options].reverse() };
    const [a, b] = (await engine.answer(request([q, reversed]), signal())).probabilities;
    const rb = [...(b ?? [])].reverse();
    assert.equal(a?.length, rb.length);
    // equal up to floating-point summation order
    a?.forEach((v, j) => {
      assert.ok(Math.abs(v - (rb[j] ?? 0)) < 1e-12, `${v} vs ${rb[j]}`);
    });
    await engine.close();
  });

  it('encodes the state once per request, batches all texts, and caches repeated texts', async () => {
    const encoder = fakeEncoder();
    // without a skill model: with one, the questions' frames go first (skill-engine.test.ts)
    const engine = createEmbeddedEngine({ encoder, miniLm: fakeMiniLm(), modelDir: modelDirWithoutSkill() });
    await engine.load();
    encoder.calls.length = 0;
    await engine.answer(request([choice(3), choice(3), noul]), signal());
    assert.equal(encoder.calls.length, 1);
    const first = encoder.calls[0] ?? [];
    assert.equal(first.filter((t) => t === 'The server is down and customers cannot pay.').length, 1);
    assert.equal(new Set(first).size, first.length);
    await engine.answer(request([choice(3), noul], 'Another state.'), signal());
    assert.deepEqual(encoder.calls[1], ['Another state.']);
    await engine.close();
  });

  it('reads JSON states flattened', async () => {
    const encoder = fakeEncoder();
    const engine = createEmbeddedEngine({ encoder, miniLm: fakeMiniLm() });
    await engine.answer({ state: { text: '{"a":{"b":1}}', json: { a: { b: 1 } } }, questions: [noul] }, signal());
    assert.ok(encoder.calls.flat().includes('a.b: 1'));
    await engine.close();
  });

  it('rejects with the signal reason once aborted', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const c = new AbortController();
    const reason = new Error('client went away');
    c.abort(reason);
    await assert.rejects(engine.answer(request([noul]), c.signal), (e) => e === reason);
    await engine.close();
  });

  it('counts tokens with the encoder tokenizer: state once, then each question', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const tok = createEncoderTokenizer();
    const counts = await engine.countTokens(request([choice(2, false), noul]));
    assert.equal(counts.state, tok.count('The server is down and customers cannot pay.'));
    assert.equal(counts.questions.length, 2);
    assert.equal(counts.questions[0], tok.count('Which one?') + tok.count('option 0') + tok.count('option 1'));
    await engine.close();
  });
});

describe('embedder', () => {
  it('embeds long texts in windows, pooled to one unit vector, and never drops text', async () => {
    const encoder = fakeEncoder();
    const embedder = createEmbedder({ encoder, tokenizer: createEncoderTokenizer(), window: 32 });
    const long = Array.from({ length: 40 }, (_, i) => `Line ${i} says something different.`).join('\n');
    const out = await embedder.embedMany([long, 'short']);
    const pieces = encoder.calls[0] ?? [];
    assert.ok(pieces.length > 3);
    assert.equal(pieces.filter((p) => p !== 'short').join(''), long);
    const v = out.get(long);
    assert.ok(v);
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-5);
    await embedder.embedMany([long]);
    assert.equal(encoder.calls.length, 1);
    assert.equal(embedder.stats().hits, 1);
    assert.equal(hash32ForTests('a'), hash32ForTests('a'));
  });
});

describe('embedder micro-batching', () => {
  it('encodes the texts of concurrent calls in one encoder call, each distinct text once', async () => {
    const encoder = fakeEncoder();
    const lookups: [boolean, number][] = [];
    const batches: number[] = [];
    const embedder = createEmbedder({
      encoder,
      tokenizer: createEncoderTokenizer(),
      metrics: () => ({
        cacheLookup: (_cache, hit, count = 1) => void lookups.push([hit, count]),
        batch: (_engine, _kind, size) => void batches.push(size),
        tokens: () => {},
      }),
    });
    const [a, b] = await Promise.all([
      embedder.embedMany(['state one', 'Which team?', 'billing']),
      embedder.embedMany(['state two', 'Which team?', 'billing']),
    ]);
    assert.equal(encoder.calls.length, 1, 'one encoder call for both requests');
    assert.deepEqual(encoder.calls[0]?.toSorted(), ['Which team?', 'billing', 'state one', 'state two']);
    assert.deepEqual(batches, [4]);
    // Each result is its own text's vector (never another text's).
    for (const [m, texts] of [
      [a, ['state one', 'Which team?', 'billing']],
      [b, ['state two', 'Which team?', 'billing']],
    ] as const) {
      for (const t of texts) assert.deepEqual(m.get(t), seededUnitVectorFromText(t));
    }
    // The second call's shared texts were in flight: hits, not new encodings.
    assert.deepEqual(lookups, [
      [true, 0],
      [false, 3],
      [true, 2],
      [false, 1],
    ]);
  });

  it('rejects every waiting call when the encoder fails, and encodes again afterwards', async () => {
    let fail = true;
    const encoder: TextEncoder = {
      async embed(texts) {
        if (fail) throw new Error('encoder down');
        return texts.map(seededUnitVectorFromText);
      },
      async close() {},
    };
    const embedder = createEmbedder({ encoder, tokenizer: createEncoderTokenizer() });
    const results = await Promise.allSettled([embedder.embedMany(['x']), embedder.embedMany(['x', 'y'])]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    fail = false;
    const ok = await embedder.embedMany(['x', 'y']);
    assert.deepEqual(ok.get('x'), seededUnitVectorFromText('x'));
  });
});

describe('embedded engine: brier-lite 4 zero-shot reading (fake encoders)', () => {
  const topics: DecisionQuestion = {
    type: 'choice',
    instructions: 'Which topic is this?',
    options: ['World', 'Sports', 'Business', 'Science'].map((label) => ({ label, description: null })),
  };

  it('answers a negated yes/no question as the complement of its plain wording', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const plain = await engine.answer(request([yesNo('Is this about sports?')]), signal());
    const negated = await engine.answer(request([yesNo('Is this not about sports?')]), signal());
    const [p] = plain.probabilities;
    const [n] = negated.probabilities;
    assert.ok(p && n);
    assert.ok(Math.abs((n[1] ?? 0) - (p[0] ?? 0)) < 1e-12, `${n} vs ${p}`);
    await engine.close();
  });

  it('gives a yes/no question naming a choice option that option probability, in the same request', async () => {
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: fakeMiniLm() });
    const got = await engine.answer(
      request([topics, yesNo('Is this about sports?'), yesNo("Isn't it business news?")]),
      signal(),
    );
    const [c, s, b] = got.probabilities;
    assert.ok(c && s && b);
    assert.ok(Math.abs((s[1] ?? 0) - (c[1] ?? 0)) < 1e-12);
    assert.ok(Math.abs((b[1] ?? 0) - (1 - (c[2] ?? 0))) < 1e-12);
    const stars: DecisionQuestion = {
      type: 'score',
      instructions: 'How many stars did the reviewer give?',
      options: ['1 star', '2 stars', '3 stars', '4 stars', '5 stars'].map((d, i) => ({
        label: String(i),
        description: d,
      })),
    };
    const cum = await engine.answer(request([stars, yesNo('Is it at least 4 stars?')]), signal());
    const [p, atLeast] = cum.probabilities;
    assert.ok(p && atLeast);
    assert.ok(Math.abs((atLeast[1] ?? 0) - ((p[3] ?? 0) + (p[4] ?? 0))) < 1e-12);
    await engine.close();
  });

  it('encodes with the second encoder only what a zero-shot family reads', async () => {
    const mini = fakeMiniLm();
    // without a skill model, which would also skip the questions it cannot place (skill-engine.test.ts)
    const engine = createEmbeddedEngine({ encoder: fakeEncoder(), miniLm: mini, modelDir: modelDirWithoutSkill() });
    await engine.load();
    const warmUp = mini.calls.length;
    await engine.answer(request([score(3), yesNo('Is this tweet offensive?')]), signal());
    assert.equal(mini.calls.length, warmUp, 'no family of this request reads MiniLM');
    await engine.answer(request([yesNo('Is this about billing?')], 'My invoice is wrong.'), signal());
    assert.deepEqual(mini.calls.at(-1)?.sort(), ['Is this about billing?', 'My invoice is wrong.'].sort());
    await engine.close();
  });
});
