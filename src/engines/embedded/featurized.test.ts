import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  fakeEncoder,
  fakeMiniLm,
  hash32ForTests,
  seededUnitVector,
  seededUnitVectorFromText,
} from '../../../test/fixtures/embedded.ts';
import { modelDirWithoutSkill } from '../../../test/fixtures/model-dir.ts';
import type { DecisionQuestion, DecisionRequest } from '../request.ts';
import {
  createFeaturizedEmbeddedEngine,
  FEATURES_DIM,
  FEATURES_ID,
  FEATURES_PREFIX,
  joinFeatures,
  rememberingEncoder,
} from './featurized.ts';
import { MINILM_DIM } from './minilm.ts';
import { EMBEDDING_DIM } from './pool.ts';

const miniOf = (text: string) => seededUnitVector(hash32ForTests(`minilm:${text}`), MINILM_DIM);

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string) {
  assert.equal(actual.length, expected.length, what);
  for (let i = 0; i < actual.length; i++)
    assert.ok(Math.abs((actual[i] ?? 0) - (expected[i] ?? 0)) < 1e-6, `${what}: dimension ${i}`);
}

const request = (text: string, questions: DecisionQuestion[]): DecisionRequest => ({
  state: { text, json: undefined },
  questions,
});
const billing: DecisionQuestion = {
  type: 'noul',
  instructions: 'Is this about billing?',
  options: [
    { label: 'false', description: null },
    { label: 'true', description: null },
  ],
};
const team: DecisionQuestion = {
  type: 'choice',
  instructions: 'Which team should handle it?',
  options: [
    { label: 'billing', description: 'charges and refunds' },
    { label: 'tech_support', description: null },
  ],
};

describe('featurized embedded engine: adapters read both encoders', () => {
  it('joins two vectors as unit halves, a missing one as zeros', () => {
    const use = new Float32Array(EMBEDDING_DIM).fill(2);
    const mini = new Float32Array(MINILM_DIM).fill(-3);
    const joined = joinFeatures(use, mini);
    assert.equal(joined.length, FEATURES_DIM);
    const norm = (v: Float32Array) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));
    assert.ok(Math.abs(norm(joined.subarray(0, EMBEDDING_DIM)) - 1) < 1e-6);
    assert.ok(Math.abs(norm(joined.subarray(EMBEDDING_DIM)) - 1) < 1e-6);
    assert.ok((joined[EMBEDDING_DIM] ?? 0) < 0, 'signs kept');
    const alone = joinFeatures(use, null);
    assert.ok(alone.subarray(EMBEDDING_DIM).every((x) => x === 0));
    assert.ok(
      joinFeatures(null, new Float32Array(MINILM_DIM)).every((x) => x === 0),
      'a zero vector stays zero',
    );
  });

  it("a state's features are its USE-lite and MiniLM embeddings side by side, under an id of their own", async () => {
    const engine = createFeaturizedEmbeddedEngine({
      encoder: fakeEncoder(),
      miniLm: fakeMiniLm(),
      modelDir: modelDirWithoutSkill(),
    });
    const features = engine.features;
    assert.ok(features);
    // adapters fitted on USE-lite alone (brier-lite 4.1's `use-lite-512`) are not served on these
    assert.notEqual(features.id, 'use-lite-512');
    assert.equal(features.id, FEATURES_ID);
    assert.equal(features.dim, EMBEDDING_DIM + MINILM_DIM);
    const text = 'My invoice is wrong.';
    const state = await features.state(request(text, [billing]));
    close(state.subarray(0, EMBEDDING_DIM), seededUnitVectorFromText(text), 'USE-lite half');
    close(state.subarray(EMBEDDING_DIM), miniOf(text), 'MiniLM half');
    await engine.close();
  });

  it("asked for USE-lite's part alone (a head fitted on it), the state features cost no MiniLM encoding", async () => {
    const mini = fakeMiniLm();
    const engine = createFeaturizedEmbeddedEngine({
      encoder: fakeEncoder(),
      miniLm: mini,
      modelDir: modelDirWithoutSkill(),
    });
    const features = engine.features;
    assert.ok(features);
    assert.deepEqual(features.prefix, FEATURES_PREFIX);
    assert.equal(FEATURES_PREFIX.dim, EMBEDDING_DIM);
    const text = 'Where is my parcel?';
    const state = await features.state(request(text, [billing]), undefined, FEATURES_PREFIX.dim);
    assert.equal(state.length, FEATURES_DIM);
    close(state.subarray(0, EMBEDDING_DIM), seededUnitVectorFromText(text), 'USE-lite half');
    assert.ok(
      state.subarray(EMBEDDING_DIM).every((x) => x === 0),
      "MiniLM's half is zeros",
    );
    assert.ok(!mini.calls.some((c) => c.includes(text)), 'no MiniLM encoding');
    // one feature past the prefix asks for every feature
    const all = await features.state(request(text, [billing]), undefined, FEATURES_PREFIX.dim + 1);
    close(all.subarray(EMBEDDING_DIM), miniOf(text), 'MiniLM half');
    await engine.close();
  });

  it('right after the engine has answered a question MiniLM reads, the state features encode nothing again', async () => {
    const use = fakeEncoder();
    const mini = fakeMiniLm();
    const engine = createFeaturizedEmbeddedEngine({ encoder: use, miniLm: mini, modelDir: modelDirWithoutSkill() });
    await engine.load();
    const r = request('My invoice is wrong.', [billing]);
    await engine.answer(r, AbortSignal.timeout(10_000));
    assert.ok(
      mini.calls.some((c) => c.includes('My invoice is wrong.')),
      'the engine read the state with MiniLM (a topic yes/no question)',
    );
    const [u, m] = [use.calls.length, mini.calls.length];
    const state = await engine.features?.state(r);
    assert.equal(use.calls.length, u, 'no USE-lite encoding');
    assert.equal(mini.calls.length, m, 'no MiniLM encoding');
    close(state?.subarray(EMBEDDING_DIM) ?? [], miniOf('My invoice is wrong.'), 'MiniLM half');
    await engine.close();
  });

  it("a choice question's option features are each option text's, in the states' space", async () => {
    const engine = createFeaturizedEmbeddedEngine({
      encoder: fakeEncoder(),
      miniLm: fakeMiniLm(),
      modelDir: modelDirWithoutSkill(),
    });
    const options = await engine.features?.options?.(team);
    assert.equal(options?.length, 2);
    const [first, second] = options ?? [];
    close(
      first ?? [],
      joinFeatures(seededUnitVectorFromText('billing: charges and refunds'), miniOf('billing: charges and refunds')),
      'option 1',
    );
    close(second ?? [], joinFeatures(seededUnitVectorFromText('tech support'), miniOf('tech support')), 'option 2');
    await engine.close();
  });

  it('closes encoders it created, never those it was given', async () => {
    let closed = 0;
    const mini = fakeMiniLm();
    const encoder = { ...fakeEncoder(), close: async () => void closed++ };
    const engine = createFeaturizedEmbeddedEngine({
      encoder,
      miniLm: { ...mini, encoder: { ...mini.encoder, close: async () => void closed++ } },
      modelDir: modelDirWithoutSkill(),
    });
    await engine.load();
    await engine.close();
    assert.equal(closed, 0);
  });

  it('a text asked while its encoding runs is encoded once; a failed encoding is retried on the next ask', async () => {
    const inner = fakeEncoder();
    let fail = false;
    const remembering = rememberingEncoder({
      embed: (texts) => (fail ? Promise.reject(new Error('encoder down')) : inner.embed(texts)),
      close: inner.close,
    });
    const [a, b] = await Promise.all([remembering.embed(['x', 'y']), remembering.embed(['y', 'z'])]);
    assert.deepEqual(inner.calls, [['x', 'y'], ['z']]);
    close(a[1] ?? [], seededUnitVectorFromText('y'), 'y, first ask');
    close(b[0] ?? [], seededUnitVectorFromText('y'), 'y, asked while running');
    await remembering.embed(['x']);
    assert.equal(inner.calls.length, 2, 'remembered');
    fail = true;
    await assert.rejects(remembering.embed(['w']), /encoder down/);
    fail = false;
    close((await remembering.embed(['w']))[0] ?? [], seededUnitVectorFromText('w'), 'w, retried');
  });
});
