import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serve } from '@hono/node-server';
import { makeTestApp, type TestApp } from '../../../test/harness.ts';
import { toDecisionRequest } from '../../systemone/normalize.ts';
import { createFakeEngine } from '../fake/fake-engine.ts';
import { createUpstreamEngine } from './system-one.ts';

describe('upstream System One engine (against a real Brier on loopback)', () => {
  let upstream: TestApp;
  let server: ReturnType<typeof serve>;
  let base: string;
  before(async () => {
    upstream = await makeTestApp({ engine: createFakeEngine({ limits: { contextTokens: 900, inputTokens: 500 } }) });
    server = serve({ fetch: upstream.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await upstream.close();
  });

  const request = toDecisionRequest({ ticket: 'charged twice' }, [
    { type: 'noul', instructions: 'refund?', criteria: { true: 'asks for money back' } },
    { type: 'choice', instructions: 'team', criteria: { billing: 'charges', tech: null } },
    { type: 'score', instructions: 'urgency', criteria: ['low', 'mid', 'high'] },
  ]);

  test('loads the upstream model and limits, answers with its distributions at 2-decimal precision', async () => {
    const engine = createUpstreamEngine({ baseUrl: base, apiKey: upstream.key });
    await engine.load();
    assert.equal(engine.ready(), true);
    assert.deepEqual(engine.limits, { contextTokens: 900, inputTokens: 500 });
    assert.match(engine.info.description, /brier-fake-3\.0\.0/);
    const got = await engine.answer(request, new AbortController().signal);
    const direct = await createFakeEngine().answer(request, new AbortController().signal);
    got.probabilities.forEach((p, i) => {
      assert.equal(p.length, direct.probabilities[i]?.length);
      assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
      p.forEach((x, j) => {
        assert.ok(Math.abs(x - (direct.probabilities[i]?.[j] ?? 0)) <= 0.011, `${i}.${j}`);
      });
    });
    assert.ok(got.inputTokens > 0);
  });

  test('a bad key fails to load with the upstream status; upstream 400s pass through as 400s', async () => {
    await assert.rejects(createUpstreamEngine({ baseUrl: base, apiKey: 'brier_sk_nope' }).load(), /answered 401/);
    const engine = createUpstreamEngine({ baseUrl: base, apiKey: upstream.key, model: 'not-a-model' });
    await engine.load();
    await assert.rejects(
      engine.answer(request, new AbortController().signal),
      (e: { code?: string; message: string }) => {
        assert.equal(e.code, 'BAD_REQUEST');
        assert.match(e.message, /upstream refused the request: model "not-a-model" is not served here/);
        return true;
      },
    );
  });
});
