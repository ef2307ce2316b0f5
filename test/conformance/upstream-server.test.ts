import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { serve } from '@hono/node-server';
import { choice, noul, TypeSafeClient } from '@typesafe-ai/sdk';
import { makeTestApp } from '../harness.ts';
import { startServer, waitHealthy } from '../server.ts';

test('BRIER_MODEL=http://... serves another System One server through Brier (keys, limits, metering in front)', async () => {
  const upstream = await makeTestApp();
  const http = serve({ fetch: upstream.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => http.once('listening', r));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  // raw: the upstream's answers pass through as they come (by default an uncalibrated model is shrunk)
  const server = await startServer({
    BRIER_MODEL: base,
    BRIER_UPSTREAM_API_KEY: upstream.key,
    BRIER_UNCALIBRATED: 'raw',
  });
  try {
    await waitHealthy(server.url);
    const client = new TypeSafeClient({
      apiKey: await server.createKey('proxy@example.com'),
      baseURL: server.url,
      retry: { maxRetries: 0 },
    });
    const res = await client.systemOne({
      state: { ticket: 'charged twice' },
      questions: { refund: noul('refund?'), team: choice('team?', { billing: null, tech: null }) },
    });
    assert.equal(res.model, 'brier-upstream-3.0.0');
    const direct = await (
      await upstream.req('/v1/systemone', {
        body: {
          state: { ticket: 'charged twice' },
          questions: {
            q0: { type: 'noul', instructions: 'refund?' },
            q1: { type: 'choice', instructions: 'team?', criteria: { billing: null, tech: null } },
          },
        },
      })
    ).json();
    assert.equal(res.answers.refund.noul, direct.answers.q0.noul);
    assert.equal(res.answers.team.choice, direct.answers.q1.choice);
    const [card] = (await client.models.list()) as unknown as Array<{ description: string; x_calibrated: boolean }>;
    assert.match(card?.description ?? '', /brier-fake-3\.0\.0/);
    assert.equal(card?.x_calibrated, false, 'served raw, and said to be uncalibrated');
  } finally {
    await server.stop();
    http.close();
    await upstream.close();
  }
});
