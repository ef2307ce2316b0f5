import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTypeSafeAi } from '@ai-sdk/typesafe-ai';
import { type Experimental_DecisionModel as DecisionModel, experimental_decide as decide } from 'ai';
import { ROUTING, trainAdapterOver } from '../fixtures/teach.ts';
import { type RunningServer, startServer, waitHealthy } from '../server.ts';

describe('@ai-sdk/typesafe-ai with ai against a running Brier', () => {
  let server: RunningServer;
  let provider: ReturnType<typeof createTypeSafeAi>;
  // @ai-sdk/typesafe-ai 3.0.0 declares the v4 *evaluation* model type, which ai 7's `decide` accepts at
  // run time but whose declared state type lags behind; the cast is on types only.
  const model = (p: ReturnType<typeof createTypeSafeAi>): DecisionModel =>
    p.evaluationModel('jev-latest') as unknown as DecisionModel;
  before(async () => {
    server = await startServer({ BRIER_MODEL: 'fake' });
    await waitHealthy(server.url);
    provider = createTypeSafeAi({ apiKey: await server.createKey('ai-sdk@example.com'), baseURL: `${server.url}/v1` });
  });
  after(async () => {
    await server.stop();
  });

  const questions = {
    department: {
      type: 'choice',
      instructions: 'Which team should handle this?',
      criteria: { billing: 'Charges and refunds', support: 'Other requests' },
    },
    requestsRefund: { type: 'boolean', instructions: 'Is the customer requesting money back?' },
    urgency: { type: 'score', instructions: 'How urgent?', criteria: ['low', 'medium', 'high'] },
  } as const;

  test('text, object and parts states all answer', async () => {
    for (const state of [
      'I was charged twice. Please refund the duplicate.',
      { ticket: 'I was charged twice.' },
      [
        { type: 'text' as const, text: 'I was charged twice.' },
        { type: 'json' as const, value: { plan: 'pro' } },
      ],
    ]) {
      const result = await decide({ model: model(provider), state, questions, maxRetries: 0 });
      assert.ok(['billing', 'support'].includes(result.answers.department.choice));
      assert.equal(typeof result.answers.requestsRefund.probability, 'number');
      assert.equal(typeof result.answers.urgency.score, 'number');
    }
  });

  test("Brier's abstention extension does not disturb the provider, and its header reaches the result", async () => {
    const asked = { ...questions, urgency: { ...questions.urgency, instructions: 'abstain: how urgent?' } } as const;
    const result = await decide({ model: model(provider), state: 's', questions: asked, maxRetries: 0 });
    // Issue 32: rounded distributions sum to exactly 1 (the hundredth left over goes to the first level).
    assert.deepEqual(result.answers.urgency.probabilities, { '0': 0.34, '1': 0.33, '2': 0.33 });
    assert.equal(typeof result.answers.requestsRefund.probability, 'number');
    assert.equal(result.response.headers?.['x-brier-abstained'], 'urgency');
  });

  test("Brier's x_answered_by extension (an adapter model id) does not disturb the provider", async () => {
    const key = await server.createKey('ai-sdk-adapter@example.com');
    const adapterId = await trainAdapterOver(server.url, key);
    const own = createTypeSafeAi({ apiKey: key, baseURL: `${server.url}/v1` });
    const adapted = own.evaluationModel(adapterId) as unknown as DecisionModel;
    const asked = {
      ...questions,
      department: { type: 'choice', instructions: ROUTING.instructions, criteria: ROUTING.criteria },
    } as const;
    const result = await decide({ model: adapted, state: 'I was charged twice.', questions: asked, maxRetries: 0 });
    assert.ok(['billing', 'tech', 'other'].includes(result.answers.department.choice));
    assert.equal(typeof result.answers.requestsRefund.probability, 'number');
    assert.equal(typeof result.answers.urgency.score, 'number');
  });

  test('a bad key surfaces as an APICallError with the server message', async () => {
    const bad = createTypeSafeAi({ apiKey: 'brier_sk_wrong', baseURL: `${server.url}/v1` });
    await assert.rejects(decide({ model: model(bad), state: 's', questions, maxRetries: 0 }), (e: unknown) => {
      assert.match(String((e as Error).message), /invalid or revoked API key/);
      return true;
    });
  });
});
