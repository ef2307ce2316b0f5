import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startServer, waitHealthy } from '../server.ts';

test('npm start defaults: embedded brier-lite on SQLite answers with no BRIER_MODEL and no download', async () => {
  const server = await startServer({});
  try {
    await waitHealthy(server.url);
    const key = await server.createKey('default@example.com');
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const models = await (await fetch(`${server.url}/v1/models`, { headers: auth })).json();
    assert.equal(models.models[0].id, 'brier-lite-3.4.0');
    const res = await fetch(`${server.url}/v1/systemone`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        state: 'I was charged twice for my subscription. Please refund one.',
        questions: {
          team: {
            type: 'choice',
            instructions: 'Which team should handle this?',
            criteria: { billing: 'charges and refunds', tech: 'bugs and outages' },
          },
          refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
        },
      }),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.model, 'brier-lite-3.4.0');
    assert.equal(body.answers.team.type, 'choice');
    assert.ok(body.usage.input_tokens > 0);
  } finally {
    await server.stop();
  }
});
