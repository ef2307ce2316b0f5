import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fail, isDomainError } from '../../lib/errors.ts';
import type { DecisionEngine } from '../engine.ts';
import { createFakeEngine } from '../fake/fake-engine.ts';
import type { DecisionRequest } from '../request.ts';
import { createEnginePool, type PoolBackend, wasRefused } from './pool.ts';

const REQUEST: DecisionRequest = {
  state: { text: 'a state', json: undefined },
  questions: [
    {
      type: 'noul',
      instructions: 'yes?',
      options: [
        { label: 'false', description: null },
        { label: 'true', description: null },
      ],
    },
  ],
};

type Behaviour = 'ok' | 'busy' | 'refused' | 'broken' | 'bad-request';

/** A backend over the fake engine that behaves as told, and counts the requests it was given. */
function backend(name: string, behaviour: () => Behaviour, options: { healthy?: boolean; delayMs?: number } = {}) {
  const fake = createFakeEngine({ delayMs: options.delayMs ?? 0 });
  let calls = 0;
  const engine: DecisionEngine = {
    ...fake,
    info: fake.info,
    limits: fake.limits,
    async answer(request, signal) {
      calls++;
      switch (behaviour()) {
        case 'busy':
          throw fail('OVERLOADED', `${name} is full`, { retryAfter: name === 'b' ? 3 : 7 });
        case 'refused':
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        case 'broken':
          throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
        case 'bad-request':
          throw fail('MAX_TOKENS', 'too long');
        default:
          return fake.answer(request, signal);
      }
    },
  };
  const b: PoolBackend = { name, engine, probe: async () => options.healthy ?? true };
  return { backend: b, calls: () => calls };
}

async function pool(...members: ReturnType<typeof backend>[]) {
  const p = createEnginePool({ backends: members.map((m) => m.backend), healthMs: 60_000, parallelism: 16 });
  await p.load();
  // One more round so that every backend has loaded (load() resolves on the first).
  await new Promise((r) => setTimeout(r, 20));
  return p;
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(isDomainError(error), String(error));
  return error;
}

describe('engine pool (BRIER_WORKERS)', () => {
  test('requests are spread over the healthy backends, the least busy first', async () => {
    const a = backend('a', () => 'ok', { delayMs: 30 });
    const b = backend('b', () => 'ok', { delayMs: 30 });
    const p = await pool(a, b);
    await Promise.all(Array.from({ length: 10 }, () => p.answer(REQUEST, new AbortController().signal)));
    assert.equal(a.calls(), 5);
    assert.equal(b.calls(), 5);
    await p.close();
  });

  test('a full backend (503) is skipped for the next one, and the answer still comes', async () => {
    const a = backend('a', () => 'busy');
    const b = backend('b', () => 'ok');
    const p = await pool(a, b);
    for (let i = 0; i < 4; i++) await p.answer(REQUEST, new AbortController().signal);
    assert.equal(b.calls(), 4);
    assert.deepEqual(p.failovers(), { busy: a.calls(), refused: 0, broken: 0 });
    await p.close();
  });

  test('when every backend is full: 503 overloaded with the smallest retry-after', async () => {
    const p = await pool(
      backend('a', () => 'busy'),
      backend('b', () => 'busy'),
    );
    const error = await refusal(p.answer(REQUEST, new AbortController().signal));
    assert.equal(error.code, 'OVERLOADED');
    assert.equal(error.retryAfter, 3);
    await p.close();
  });

  test('a backend that breaks mid-request is marked down and the request is retried once on another', async () => {
    const a = backend('a', () => 'broken');
    const b = backend('b', () => 'ok');
    const p = await pool(a, b);
    const answers = await Promise.all([0, 1].map(() => p.answer(REQUEST, new AbortController().signal)));
    assert.equal(answers.length, 2);
    assert.equal(a.calls(), 1, 'the broken backend is not tried again before a health check passes');
    assert.deepEqual(
      p.backends().map((x) => x.healthy),
      [false, true],
    );
    await p.close();
  });

  test('a request that breaks on two backends: 503 with retry-after after its one retry', async () => {
    const a = backend('a', () => 'broken');
    const b = backend('b', () => 'broken');
    const p = await pool(a, b);
    const error = await refusal(p.answer(REQUEST, new AbortController().signal));
    assert.equal(error.code, 'OVERLOADED');
    assert.equal(error.retryAfter, 1);
    assert.equal(a.calls() + b.calls(), 2);
    assert.deepEqual(p.failovers(), { busy: 0, refused: 0, broken: 2 });
    await p.close();
  });

  test('a refused connection costs no retry: after a refusal and a break, the third backend still answers', async () => {
    const refused = backend('a', () => 'refused');
    const ok = backend('b', () => 'ok');
    const broken = backend('c', () => 'broken');
    // Picks go in turn among the least busy: a, then c (the second of b and c), then b.
    const p = await pool(refused, ok, broken);
    const answer = await p.answer(REQUEST, new AbortController().signal);
    assert.equal(answer.probabilities.length, 1);
    assert.deepEqual([refused.calls(), broken.calls(), ok.calls()], [1, 1, 1]);
    assert.deepEqual(p.failovers(), { busy: 0, refused: 1, broken: 1 });
    await p.close();
  });

  test('no healthy backend: 503 not_ready with retry-after at once', async () => {
    const down = createEnginePool({
      backends: [{ ...backend('a', () => 'ok').backend, probe: async () => false }],
      healthMs: 10,
      parallelism: 1,
    });
    await down.load();
    await new Promise((r) => setTimeout(r, 50));
    const error = await refusal(down.answer(REQUEST, new AbortController().signal));
    assert.equal(error.code, 'NOT_READY');
    assert.equal(error.retryAfter, 1);
    assert.equal(down.ready(), true, 'the gateway stays ready: the control plane still works');
    await down.close();
  });

  test("a refusal of the request itself (400) is the caller's, never retried elsewhere", async () => {
    const a = backend('a', () => 'bad-request');
    const b = backend('b', () => 'bad-request');
    const p = await pool(a, b);
    const error = await refusal(p.answer(REQUEST, new AbortController().signal));
    assert.equal(error.code, 'MAX_TOKENS');
    assert.equal(a.calls() + b.calls(), 1);
    await p.close();
  });

  test('connection refusals are told apart from failures mid-request, through causes', () => {
    assert.equal(wasRefused(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })), true);
    assert.equal(wasRefused(Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' })), false);
    assert.equal(wasRefused(new Error('upstream answered 500')), false);
  });

  test('state features: asked of the backend that answered the request, another when it is down; none when backends have none', async () => {
    const asked: string[] = [];
    const withFeatures = (name: string, behaviour: () => Behaviour) => {
      const b = backend(name, behaviour);
      const engine = b.backend.engine;
      const features = {
        id: 'use-lite-512',
        dim: 2,
        async state() {
          asked.push(name);
          if (behaviour() === 'refused')
            throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
          return Float32Array.from([name === 'a' ? 1 : 2, 0]);
        },
      };
      b.backend.engine = { ...engine, info: engine.info, limits: engine.limits, features };
      return b;
    };
    let aDown = false;
    const a = withFeatures('a', () => (aDown ? 'refused' : 'ok'));
    const b = withFeatures('b', () => 'ok');
    const p = await pool(a, b);
    assert.equal(p.features?.id, 'use-lite-512');
    for (let i = 0; i < 4; i++) {
      const request = { ...REQUEST, state: { text: `state ${i}`, json: undefined } };
      const before = [a.calls(), b.calls()];
      await p.answer(request, new AbortController().signal);
      const answered = a.calls() > (before[0] ?? 0) ? 'a' : 'b';
      asked.length = 0;
      await p.features?.state(request);
      assert.deepEqual(asked, [answered], 'asked of the backend that answered');
    }
    // the backend that answered is down by the time the features are asked: another answers
    const request = { ...REQUEST, state: { text: 'late', json: undefined } };
    await p.answer(request, new AbortController().signal);
    aDown = true;
    asked.length = 0;
    const v = await p.features?.state(request);
    assert.equal(v?.[0], 2, "b's features");
    assert.equal(asked.at(-1), 'b');
    const plain = await pool(backend('c', () => 'ok'));
    assert.equal(plain.features, undefined, 'no features: calibration-only adapters');
  });
});
