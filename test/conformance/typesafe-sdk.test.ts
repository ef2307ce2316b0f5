import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AuthenticationError,
  BadRequestError,
  choice,
  InternalServerError,
  noul,
  PermissionDeniedError,
  score,
  TypeSafeClient,
  UnprocessableEntityError,
} from '@typesafe-ai/sdk';
import { ROUTING, trainAdapterOver } from '../fixtures/teach.ts';
import { type RunningServer, startServer, waitHealthy } from '../server.ts';

describe('@typesafe-ai/sdk against a running Brier', () => {
  let server: RunningServer;
  let client: TypeSafeClient;
  before(async () => {
    server = await startServer({ BRIER_MODEL: 'fake' });
    await waitHealthy(server.url);
    client = new TypeSafeClient({
      apiKey: await server.createKey('sdk@example.com'),
      baseURL: server.url,
      retry: { maxRetries: 0 },
    });
  });
  after(async () => {
    await server.stop();
  });

  test('all three question types with a text state', async () => {
    const res = await client.systemOne({
      state: 'I was charged twice. Please refund the duplicate.',
      questions: {
        refund: noul('Is the customer asking for money back?'),
        team: choice('Which team should handle this?', { billing: 'charges and refunds', support: null }),
        urgency: score('How urgent is it?', ['low', 'medium', 'high']),
      },
    });
    assert.equal(typeof res.answers.refund.noul, 'number');
    assert.ok(['billing', 'support'].includes(res.answers.team.choice));
    assert.equal(typeof res.answers.team.confidence, 'number');
    assert.ok(res.answers.urgency.score >= 0 && res.answers.urgency.score <= 2);
    assert.deepEqual(Object.keys(res.answers.urgency.probabilities), ['0', '1', '2']);
    assert.equal(res.model, 'brier-fake-3.0.0');
    assert.ok(res.usage.input_tokens > 0);
  });

  test("Brier's abstention extension reaches the SDK's answers untouched", async () => {
    const res = await client.systemOne({
      state: 'I was charged twice.',
      questions: {
        refund: noul('abstain: is the customer asking for money back?'),
        team: choice('Which team should handle this?', { billing: 'charges and refunds', support: null }),
      },
    });
    assert.equal(res.answers.refund.noul, 0.5);
    // The extension is not in the SDK's types: read it as the JSON the server sent.
    const answers = res.answers as unknown as Record<string, { x_abstained?: unknown }>;
    assert.equal(answers.refund?.x_abstained, true);
    assert.equal(typeof answers.team?.x_abstained, 'boolean');
  });

  test("Brier's x_answered_by extension (an adapter of the key's account) reaches the SDK's answers untouched", async () => {
    const key = await server.createKey('sdk-adapter@example.com');
    const adapterId = await trainAdapterOver(server.url, key);
    const own = new TypeSafeClient({ apiKey: key, baseURL: server.url, retry: { maxRetries: 0 } });
    const res = await own.systemOne({
      model: adapterId,
      state: 'I was charged twice. Please refund the duplicate.',
      questions: {
        team: choice(ROUTING.instructions, ROUTING.criteria),
        refund: noul('Is the customer asking for money back?'),
      },
    });
    assert.equal(res.model, adapterId);
    assert.ok(['billing', 'tech', 'other'].includes(res.answers.team.choice));
    const answers = res.answers as unknown as Record<string, { x_answered_by?: unknown }>;
    assert.equal(answers.team?.x_answered_by, adapterId);
    assert.equal(answers.refund?.x_answered_by, 'brier-fake-3.0.0');
    const models = await own.models.list();
    assert.deepEqual(
      models.map((m) => (m as unknown as { id: string }).id),
      ['brier-fake-3.0.0', adapterId],
    );
    // Another key's account cannot name it: the SDK's BadRequestError, as for any unknown model.
    await assert.rejects(
      client.systemOne({ model: adapterId, state: 's', questions: { q: noul('x') } }),
      (e: unknown) => e instanceof BadRequestError,
    );
  });

  test('object and array states, structured instructions and criteria, and the request id', async () => {
    const { data, requestId } = await client
      .systemOne({
        state: { ticket: { body: 'charged twice' }, history: ['opened', 'escalated'] },
        questions: {
          q1: noul({ ask: 'is this billing?' }, { true: { means: 'billing' }, false: 'anything else' }),
          q2: choice(['pick', 'one'], { a: { detail: 1 }, b: ['x'] }),
          q3: score({ scale: 'urgency' }, [{ level: 'low' }, ['mid'], 'high']),
        },
      })
      .withResponse();
    assert.match(requestId ?? '', /^req_[0-9a-f]{32}$/);
    assert.deepEqual(Object.keys(data.answers).sort(), ['q1', 'q2', 'q3']);
    const arr = await client.systemOne({ state: ['line one', 'line two'], questions: { q: noul('ok?') } });
    assert.equal(arr.answers.q.type, 'noul');
  });

  test('models.list()', async () => {
    const models = await client.models.list();
    assert.equal(models.length, 1);
    assert.equal(models[0]?.name, 'brier-latest');
    assert.equal((models[0] as unknown as { id: string }).id, 'brier-fake-3.0.0');
  });

  test('each error status surfaces as the matching SDK error class with a readable message', async () => {
    const bad = new TypeSafeClient({ apiKey: 'brier_sk_wrong', baseURL: server.url, retry: { maxRetries: 0 } });
    await assert.rejects(bad.systemOne({ state: 's', questions: { q: noul('x') } }), (e: unknown) => {
      assert.ok(e instanceof AuthenticationError);
      assert.match(e.message, /^401 invalid or revoked API key/);
      return true;
    });
    // The SDK always sends a key; a fetch that drops it shows how a missing header surfaces.
    const stripAuth: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.delete('authorization');
      return fetch(input, { ...init, headers });
    };
    const none = new TypeSafeClient({ apiKey: 'x', baseURL: server.url, retry: { maxRetries: 0 }, fetch: stripAuth });
    await assert.rejects(none.models.list(), (e: unknown) => {
      assert.ok(e instanceof PermissionDeniedError);
      assert.match(e.message, /^403 missing Authorization header/);
      return true;
    });
    await assert.rejects(
      client.systemOne({ model: 'gpt-4', state: 's', questions: { q: noul('x') } }),
      (e: unknown) => {
        assert.ok(e instanceof BadRequestError);
        assert.match(e.message, /400 model "gpt-4" is not served here/);
        return true;
      },
    );
    // Issue 32: an option count outside 2 to 255 is a validation error like any other invalid body (422).
    const many = Object.fromEntries(Array.from({ length: 256 }, (_, i) => [`o${i}`, null]));
    await assert.rejects(client.systemOne({ state: 's', questions: { c: choice('pick', many) } }), (e: unknown) => {
      assert.ok(e instanceof UnprocessableEntityError);
      assert.match(e.message, /choice needs 2 to 255 labels, got 256/);
      return true;
    });
    await assert.rejects(
      client.systemOne({ state: null as unknown as string, questions: { q: noul('x') } }),
      (e: unknown) => {
        assert.ok(e instanceof UnprocessableEntityError);
        assert.match(e.message, /state: must be a string, a JSON object or a JSON array/);
        return true;
      },
    );
  });
});

describe('@typesafe-ai/sdk against an overloaded Brier', () => {
  test('503 with retry-after surfaces as InternalServerError after the SDK honours retry-after', async () => {
    const server = await startServer({ BRIER_MODEL: 'fake:400', BRIER_QUEUE_LIMIT: '1' });
    try {
      await waitHealthy(server.url);
      const client = new TypeSafeClient({
        apiKey: await server.createKey('busy@example.com'),
        baseURL: server.url,
        retry: { maxRetries: 0 },
      });
      const results = await Promise.allSettled(
        [0, 1, 2].map(() => client.systemOne({ state: 's', questions: { q: noul('x') } })),
      );
      const rejected = results.filter((r) => r.status === 'rejected');
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      assert.equal(rejected.length, 2);
      for (const r of rejected) {
        const e = (r as PromiseRejectedResult).reason;
        assert.ok(e instanceof InternalServerError);
        assert.equal(e.status, 503);
        assert.ok(Number(e.headers.get('retry-after')) >= 1);
        assert.match(e.message, /^503 the model is busy/);
      }
    } finally {
      await server.stop();
    }
  });
});
