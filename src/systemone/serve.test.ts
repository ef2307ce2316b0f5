import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ADAPTER_FORMAT, type AdapterFile } from '../engines/adapters/adapter.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import { createFakeEngine } from '../engines/fake/fake-engine.ts';
import { createEngineHost } from '../engines/host.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { createAdapterResolver } from './adapters.ts';
import type { WireQuestion } from './protocol.ts';
import { createSystemOne } from './serve.ts';
import { templateOf } from './templates.ts';

const QUESTION: WireQuestion = { type: 'noul', instructions: 'Is the customer asking for a refund?' };
const DIM = 4;

/** A fake engine with state features whose answer waits for `release`, recording the order of calls. */
function gatedEngine() {
  const inner = createFakeEngine();
  const events: string[] = [];
  /** The `dims` of each features call. */
  const asked: (number | undefined)[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const engine: DecisionEngine = {
    ...inner,
    async answer(request, signal) {
      events.push('answer started');
      await gate;
      events.push('answer done');
      return inner.answer(request, signal);
    },
    features: {
      id: 'fake-features',
      dim: DIM,
      async state(_request: DecisionRequest, _signal?: AbortSignal, dims?: number) {
        events.push('features asked');
        asked.push(dims);
        return new Float32Array(DIM).fill(0.5);
      },
    },
  };
  return { engine, events, asked, release: () => release() };
}

/** A probe head on the first `dim` features (all DIM by default). */
function probeAdapter(base: string, dim = DIM): AdapterFile {
  const weights = Buffer.alloc(2 * dim * 4);
  for (let i = 0; i < 2 * dim; i++) weights.writeFloatLE(i % 2 ? 0.3 : -0.3, i * 4);
  return {
    format: ADAPTER_FORMAT,
    base,
    features: 'fake-features',
    heads: [
      {
        template: templateOf(QUESTION).id,
        type: 'noul',
        labels: ['false', 'true'],
        kind: 'probe',
        baseWeight: 1,
        bias: [0, 0],
        weights: weights.toString('base64'),
        dim,
        temperature: 1,
      },
    ],
  };
}

async function serving(queueLimit = 8, headDim = DIM) {
  const { engine, events, asked, release } = gatedEngine();
  await engine.load();
  const host = createEngineHost(engine, { queueLimit, timeoutMs: 10_000 });
  const record = {
    id: 'ft:x',
    base: engine.info.id,
    artifact: JSON.stringify(probeAdapter(engine.info.id, headDim)),
    createdAt: 0,
  };
  const adapters = createAdapterResolver(
    { find: async (_user, id) => (id === record.id ? record : undefined), list: async () => [record] },
    engine,
  );
  return { systemOne: createSystemOne(host, { adapters }), events, asked, release };
}

describe('serving through an adapter with a probe head', () => {
  it('asks for the state features while the engine is still answering, not after', async () => {
    const { systemOne, events, release } = await serving();
    const served = systemOne.serve(
      { model: 'ft:x', state: 'I was charged twice.', questions: { q: QUESTION } },
      undefined,
      {
        account: 'u1',
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    // both under way, the answer not done yet
    assert.deepEqual(events.toSorted(), ['answer started', 'features asked']);
    release();
    const { response } = await served;
    assert.equal(response.answers.q?.x_answered_by, 'ft:x');
  });

  it("asks only for the features its heads read (a head on the features' prefix: no second encoder)", async () => {
    for (const headDim of [DIM / 2, DIM]) {
      const { systemOne, asked, release } = await serving(8, headDim);
      release();
      const { response } = await systemOne.serve(
        { model: 'ft:x', state: 'I was charged twice.', questions: { q: QUESTION } },
        undefined,
        { account: 'u1' },
      );
      assert.equal(response.answers.q?.x_answered_by, 'ft:x');
      assert.deepEqual(asked, [headDim]);
    }
  });

  it('asks for no features for a request the queue refuses', async () => {
    const { systemOne, events, release } = await serving(1);
    const ask = () =>
      systemOne.serve({ model: 'ft:x', state: 'I was charged twice.', questions: { q: QUESTION } }, undefined, {
        account: 'u1',
      });
    const first = ask();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await assert.rejects(ask(), (e: { code?: string }) => e.code === 'OVERLOADED');
    assert.equal(events.filter((e) => e === 'features asked').length, 1);
    release();
    await first;
  });
});
