/**
 * GGUF engine on real llama.cpp: always on the generated tiny model (tiny-gguf.ts), and also on
 * ../shared/models/stories260K.gguf when ../shared is present. Tests use one thread: on a shared
 * 2-core machine two spinning ggml threads slow down badly when another process holds a core.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { writeTinyGguf } from '../../../test/fixtures/tiny-gguf.ts';
import type { DecisionEngine, EngineAnswer } from '../engine.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import { CONTEXT_MARGIN, createGgufEngine, GGUF_ENGINE_ID } from './gguf-engine.ts';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../../..');
const sharedModel = resolve(repoRoot, '../shared/models/stories260K.gguf');
const CONTEXT = 4096;

const options = (labels: readonly string[], description: (i: number) => string | null = () => null) =>
  labels.map((label, i) => ({ label, description: description(i) }));
const noul = (instructions: string | null, describe = false): DecisionQuestion => ({
  type: 'noul',
  instructions,
  options: options(['false', 'true'], (i) => (describe ? (['it is not', 'it is'][i] ?? null) : null)),
});
const choice = (count: number, instructions: string | null = 'Which one?'): DecisionQuestion => ({
  type: 'choice',
  instructions,
  options: options(
    Array.from({ length: count }, (_, i) => `o${i}`),
    (i) => (i < 3 ? `option number ${i}` : null),
  ),
});
const score = (levels: number, instructions: string | null = 'How urgent?'): DecisionQuestion => ({
  type: 'score',
  instructions,
  options: options(
    Array.from({ length: levels }, (_, i) => String(i)),
    (i) => (i === 0 ? 'not at all' : null),
  ),
});
const request = (text: string, questions: DecisionQuestion[]): DecisionRequest => ({
  state: { text, json: undefined },
  questions,
});

const STATE = 'The customer says the parcel arrived broken and wants the money back by Friday.';
const MIXED = request(STATE, [
  noul('Does the customer want a refund?'),
  noul('Is the parcel damaged?', true),
  noul(null),
  choice(3, null),
  score(5, null),
  score(1),
]);
const BIG = request(STATE, [choice(255), score(10)]);

const signal = () => new AbortController().signal;

function assertDistribution(p: number[] | undefined, length: number, what: string): void {
  assert.ok(p !== undefined, `${what}: missing`);
  assert.equal(p.length, length, `${what}: length`);
  for (const x of p) assert.ok(Number.isFinite(x) && x >= 0 && x <= 1, `${what}: ${x} out of [0, 1]`);
  assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9, `${what}: sums to ${p.reduce((a, b) => a + b, 0)}`);
}

function maxDifference(a: EngineAnswer, b: EngineAnswer): number {
  return Math.max(...a.probabilities.flatMap((p, i) => p.map((x, j) => Math.abs(x - (b.probabilities[i]?.[j] ?? 2)))));
}

let tmp = '';
let tinyModel = '';
before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'brier-gguf-engine-'));
  tinyModel = await writeTinyGguf(join(tmp, 'tiny.gguf'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const MODELS = [
  { name: 'generated tiny model (tiny-gguf.ts)', path: () => tinyModel, present: true },
  { name: 'stories260K (../shared/models)', path: () => sharedModel, present: existsSync(sharedModel) },
];

for (const model of MODELS) {
  describe(`GGUF engine on the ${model.name}`, { skip: model.present ? false : `${sharedModel} is absent` }, () => {
    let engine: DecisionEngine;
    const engines: DecisionEngine[] = [];
    type Extra = {
      temperature?: number;
      reusePrefix?: boolean;
      id?: string;
      parallelism?: number;
      answerCacheEntries?: number;
      promptFormat?: 'plain' | 'chat';
    };
    const make = (extra: Extra = {}) => {
      const made = createGgufEngine({ modelPath: model.path(), contextSize: CONTEXT, threads: 1, ...extra });
      engines.push(made);
      return made;
    };
    before(() => {
      engine = make();
    });
    after(async () => {
      await Promise.all(engines.map((e) => e.close()));
    });

    test('loads once, then reports ready with a generation-3 id and limits from the context size', async (t) => {
      t.diagnostic(`model file: ${model.path()}`);
      assert.equal(engine.ready(), false);
      await Promise.all([engine.load(), engine.load()]);
      assert.equal(engine.ready(), true);
      assert.equal(engine.info.id, GGUF_ENGINE_ID);
      assert.match(engine.info.id, /^brier-gguf-3\.\d+\.\d+$/);
      assert.match(engine.info.releaseDate, /^\d{4}-\d{2}-\d{2}$/);
      assert.deepEqual(engine.limits, {
        contextTokens: CONTEXT - CONTEXT_MARGIN,
        inputTokens: CONTEXT - CONTEXT_MARGIN,
      });
      assert.equal(make({ id: 'brier-gguf-3.1.0' }).info.id, 'brier-gguf-3.1.0');
    });

    test('answers every question type with a distribution over its options', async () => {
      const answer = await engine.answer(MIXED, signal());
      assert.equal(answer.probabilities.length, MIXED.questions.length);
      MIXED.questions.forEach((q, i) => {
        assertDistribution(answer.probabilities[i], q.options.length, `question ${i} (${q.type})`);
      });
      assert.deepEqual(answer.probabilities[5], [1]);
    });

    test('answers a 255-option choice and a 10-level score', async () => {
      const answer = await engine.answer(BIG, signal());
      assertDistribution(answer.probabilities[0], 255, '255-option choice');
      assertDistribution(answer.probabilities[1], 10, '10-level score');
    });

    test('gives identical numbers for the same request twice, also after another state', async () => {
      const first = await engine.answer(MIXED, signal());
      const second = await engine.answer(MIXED, signal());
      await engine.answer(request('Another state entirely.', [noul('Is it?')]), signal());
      const third = await engine.answer(MIXED, signal());
      assert.deepEqual(second, first);
      assert.deepEqual(third, first);
    });

    test('scores on the cached state as a full recompute in a fresh context does', async (t) => {
      const fresh = make({ reusePrefix: false });
      await fresh.load();
      const questions = [...MIXED.questions, ...BIG.questions];
      const cached = await engine.answer(request(STATE, questions), signal());
      const full = await fresh.answer(request(STATE, questions), signal());
      const difference = maxDifference(cached, full);
      t.diagnostic(`largest difference: ${difference}`);
      assert.ok(difference < 1e-4, `cached and full recompute differ by ${difference}`);
    });

    test("in the model's chat template: every type and size answered, cached equal to a full recompute", async () => {
      const [chat, fresh] = [make({ promptFormat: 'chat' }), make({ promptFormat: 'chat', reusePrefix: false })];
      await Promise.all([chat.load(), fresh.load(), engine.load()]);
      const questions = [...MIXED.questions, ...BIG.questions];
      const cached = await chat.answer(request(STATE, questions), signal());
      questions.forEach((q, i) => {
        assertDistribution(cached.probabilities[i], q.options.length, `chat: question ${i} (${q.type})`);
      });
      assert.ok(maxDifference(cached, await fresh.answer(request(STATE, questions), signal())) < 1e-4);
      assert.notDeepEqual(
        cached.probabilities,
        (await engine.answer(request(STATE, questions), signal())).probabilities,
      );
      const counts = await chat.countTokens(request(STATE, questions));
      assert.equal(
        cached.inputTokens,
        counts.questions.reduce((a, b) => a + b, counts.state),
      );
    });

    test('counts the state once and each question as the prompt reads it', async () => {
      const one = await engine.countTokens(request(STATE, [noul('Is it?')]));
      const counts = await engine.countTokens(MIXED);
      assert.ok(counts.state > 10);
      assert.equal(one.state, counts.state);
      assert.equal(counts.questions.length, MIXED.questions.length);
      for (const n of counts.questions) assert.ok(n > 0);
      const longer = await engine.countTokens(request(STATE, [noul('Is it? Think about the parcel and the date.')]));
      assert.ok((longer.questions[0] ?? 0) > (one.questions[0] ?? 0));

      const answer = await engine.answer(MIXED, signal());
      assert.equal(answer.inputTokens, counts.state + counts.questions.reduce((a, b) => a + b, 0));
      const optionCount = MIXED.questions.reduce((sum, q) => sum + q.options.length, 0);
      assert.ok(answer.outputTokens >= optionCount);
      // Digit levels are one token each (after a shared lead) in both vocabularies.
      const levels = await engine.answer(request(STATE, [score(10)]), signal());
      assert.equal(levels.outputTokens, 10);
    });

    test('rejects a request longer than the context with a RangeError and keeps answering', async () => {
      const huge = request('word '.repeat(CONTEXT), [noul('Is it?')]);
      const counts = await engine.countTokens(huge);
      assert.ok(counts.state > engine.limits.inputTokens);
      await assert.rejects(engine.answer(huge, signal()), RangeError);
      assertDistribution((await engine.answer(MIXED, signal())).probabilities[0], 2, 'after the RangeError');
    });

    test('rejects with the signal reason when aborted before, while queued or while running', async () => {
      // Without the answer cache, so that every call below really runs the model.
      const engine = make({ answerCacheEntries: 0 });
      await engine.load();
      const baseline = await engine.answer(BIG, signal());

      const early = new AbortController();
      const reason = new Error('client went away');
      early.abort(reason);
      await assert.rejects(engine.answer(BIG, early.signal), (error) => error === reason);

      const running = new AbortController();
      const queued = new AbortController();
      const first = engine.answer(BIG, running.signal);
      const second = engine.answer(BIG, queued.signal);
      const runningReason = new Error('stop running');
      const queuedReason = new Error('stop queued');
      queued.abort(queuedReason);
      setImmediate(() => running.abort(runningReason));
      await assert.rejects(second, (error) => error === queuedReason);
      await assert.rejects(first, (error) => error === runningReason);

      assert.deepEqual(await engine.answer(BIG, signal()), baseline);
    });

    test('serializes concurrent calls and answers each as it would alone', async () => {
      // parallelism 1: one request at a time, so the numbers are bit-identical (parallel requests
      // share evaluation batches, which moves logits by float rounding: see the prefix-cache tests).
      const serial = make({ parallelism: 1 });
      await serial.load();
      const requests = [MIXED, request('A short state.', [choice(4), noul('Is it short?')]), BIG];
      const alone: EngineAnswer[] = [];
      for (const r of requests) alone.push(await serial.answer(r, signal()));
      const together = await Promise.all(requests.map((r) => serial.answer(r, signal())));
      assert.deepEqual(together, alone);
    });

    test('temperature 2 gives softmax(log p / 2) of the temperature-1 distribution', async () => {
      const warm = make({ temperature: 2 });
      await warm.load();
      const levels = request(STATE, [score(10)]);
      const [p1] = (await engine.answer(levels, signal())).probabilities;
      const [p2] = (await warm.answer(levels, signal())).probabilities;
      assert.ok(p1 !== undefined && p2 !== undefined);
      const halved = p1.map((x) => Math.sqrt(x));
      const total = halved.reduce((a, b) => a + b, 0);
      halved.forEach((x, i) => {
        assert.ok(Math.abs(x / total - (p2[i] ?? 2)) < 1e-6, `level ${i}`);
      });
    });

    test('refuses to answer before load and after close', async () => {
      const idle = make();
      await assert.rejects(idle.answer(MIXED, signal()), /not loaded/);
      await idle.load();
      await idle.close();
      assert.equal(idle.ready(), false);
      await assert.rejects(idle.countTokens(MIXED), /not loaded/);
    });
  });
}

describe('GGUF engine prefix cache (several sequences, LRU)', () => {
  const engines: DecisionEngine[] = [];
  const lookups: boolean[] = [];
  const hook = {
    cacheLookup: (cache: string, hit: boolean) => {
      if (cache === 'gguf_prefix') lookups.push(hit);
    },
    batch: () => {},
    tokens: () => {},
  };
  // The answer cache is off here, so that repeated requests exercise the prefix cache.
  const make = (extra: { sequences?: number; reusePrefix?: boolean; parallelism?: number } = {}) => {
    const made = createGgufEngine({
      modelPath: tinyModel,
      contextSize: CONTEXT,
      threads: 1,
      answerCacheEntries: 0,
      ...extra,
    });
    engines.push(made);
    return made;
  };
  after(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });

  // States that share a long beginning and differ only at the end (same token count).
  const states = ['The parcel arrived broken on Monday.', 'The parcel arrived broken on Friday.', 'A refund.'];
  const questions = [noul('Does the customer want a refund?'), choice(3), score(5)];

  test('a cached prefix never answers for another state, also after eviction and in any order', async () => {
    const cached = make({ sequences: 2, parallelism: 1 });
    const reference = make({ reusePrefix: false, sequences: 1, parallelism: 1 });
    await Promise.all([cached.load(), reference.load()]);
    cached.attachMetrics?.(hook);
    const expected = new Map<string, EngineAnswer>();
    for (const text of states) expected.set(text, await reference.answer(request(text, questions), signal()));
    // 3 states on 2 slots: A B A C B A ... evicts and reloads.
    const order = [0, 1, 0, 2, 1, 0, 2, 2, 1];
    lookups.length = 0;
    for (const i of order) {
      const text = states[i] ?? '';
      const got = await cached.answer(request(text, questions), signal());
      assert.deepEqual(got, expected.get(text), `state ${i}`);
    }
    assert.ok(lookups.includes(true), 'some requests reused a cached prefix');
    assert.ok(lookups.filter((h) => !h).length >= 3, 'each state was evaluated at least once');
    // The two same-length states that differ only at the end never share a slot's answer.
    assert.notDeepEqual(expected.get(states[0] ?? ''), expected.get(states[1] ?? ''));
  });

  test('keeps a state cached while others come and go (LRU over the slots)', async () => {
    const cached = make({ sequences: 3, parallelism: 1 });
    await cached.load();
    cached.attachMetrics?.(hook);
    lookups.length = 0;
    for (const i of [0, 1, 0, 2, 0, 1]) await cached.answer(request(states[i] ?? '', questions), signal());
    // misses: 0, 1, 2; hits: the repeats of 0 and 1 (3 slots hold all three).
    assert.deepEqual(lookups, [false, false, true, false, true, true]);
  });

  test('concurrent requests answer as alone; the same state concurrently is evaluated once', async () => {
    const cached = make({ sequences: 4, parallelism: 4 });
    const reference = make({ reusePrefix: false, sequences: 1, parallelism: 1 });
    await Promise.all([cached.load(), reference.load()]);
    cached.attachMetrics?.(hook);
    const batch = [0, 1, 2, 0, 1, 0].map((i) => request(states[i] ?? '', questions));
    const alone: EngineAnswer[] = [];
    for (const r of batch) alone.push(await reference.answer(r, signal()));
    lookups.length = 0;
    const together = await Promise.all(batch.map((r) => cached.answer(r, signal())));
    // Sequences evaluated in one batch differ from one-at-a-time by float rounding only (~1e-8).
    together.forEach((got, i) => {
      const want = alone[i];
      assert.ok(want !== undefined);
      assert.equal(got.inputTokens, want.inputTokens);
      assert.equal(got.outputTokens, want.outputTokens);
      const difference = maxDifference(got, want);
      assert.ok(difference < 1e-5, `request ${i}: differs from its answer alone by ${difference}`);
    });
    assert.equal(lookups.filter((h) => !h).length, 3, 'three distinct states, three prefills');
  });
});

describe('GGUF engine answer cache', () => {
  const engines: DecisionEngine[] = [];
  const seen: { cache: string; hit: boolean; count: number }[] = [];
  const hook = {
    cacheLookup: (cache: string, hit: boolean, count = 1) => void seen.push({ cache, hit, count }),
    batch: () => {},
    tokens: () => {},
  };
  const count = (cache: string, hit: boolean) =>
    seen.filter((s) => s.cache === cache && s.hit === hit).reduce((sum, s) => sum + s.count, 0);
  const make = (extra: { answerCacheEntries?: number } = {}) => {
    const made = createGgufEngine({ modelPath: tinyModel, contextSize: CONTEXT, threads: 1, sequences: 2, ...extra });
    engines.push(made);
    return made;
  };
  after(async () => {
    await Promise.all(engines.map((e) => e.close()));
  });
  const questions = [noul('Does the customer want a refund?'), choice(3), score(5)];

  test('a repeated question on the same state is answered from the cache, without a slot', async () => {
    const cached = make();
    const reference = make({ answerCacheEntries: 0 });
    await Promise.all([cached.load(), reference.load()]);
    cached.attachMetrics?.(hook);
    seen.length = 0;
    const first = await cached.answer(request('The parcel arrived broken.', questions), signal());
    assert.equal(count('gguf_answer', false), 3);
    const again = await cached.answer(request('The parcel arrived broken.', questions), signal());
    assert.deepEqual(again, first);
    assert.equal(count('gguf_answer', true), 3);
    assert.equal(count('gguf_prefix', true) + count('gguf_prefix', false), 1, 'the second request took no slot');
    assert.deepEqual(first, await reference.answer(request('The parcel arrived broken.', questions), signal()));
  });

  test('only new questions are scored; another state never gets a cached answer', async () => {
    const cached = make();
    const reference = make({ answerCacheEntries: 0 });
    await Promise.all([cached.load(), reference.load()]);
    cached.attachMetrics?.(hook);
    await cached.answer(request('The parcel arrived broken.', questions), signal());
    seen.length = 0;
    const mixed = [questions[0], noul('Is the customer angry?'), questions[2]].filter((q) => q !== undefined);
    const got = await cached.answer(request('The parcel arrived broken.', mixed), signal());
    assert.equal(count('gguf_answer', true), 2);
    assert.equal(count('gguf_answer', false), 1);
    assert.equal(count('gguf_prefix', true), 1, 'the new question reused the state prefix');
    assert.deepEqual(got, await reference.answer(request('The parcel arrived broken.', mixed), signal()));
    // Same questions, a state differing in one word: all misses, and its own numbers.
    seen.length = 0;
    const other = await cached.answer(request('The parcel arrived intact.', questions), signal());
    assert.equal(count('gguf_answer', true), 0);
    assert.deepEqual(other, await reference.answer(request('The parcel arrived intact.', questions), signal()));
  });

  test('answerCacheEntries 0 turns it off', async () => {
    const off = make({ answerCacheEntries: 0 });
    await off.load();
    off.attachMetrics?.(hook);
    seen.length = 0;
    await off.answer(request('The parcel arrived broken.', questions), signal());
    await off.answer(request('The parcel arrived broken.', questions), signal());
    assert.equal(count('gguf_answer', true) + count('gguf_answer', false), 0);
    assert.equal(count('gguf_prefix', true), 1);
    assert.throws(() => make({ answerCacheEntries: -1 }), /answerCacheEntries/);
  });
});
