import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { tempSite } from '../../../../test/fixtures/static-sites.ts';
import { makeTestApp, signedInClient } from '../../../../test/harness.ts';

const card = tempSite('brier-card-', { 'MODEL_CARD.md': '# Test model card\n\nWhat it is for.\n' });
after(() => card.remove());

describe('GET /control/v1/model 200', () => {
  test('the served model with its limits; no card when the server has none', async () => {
    const t = await makeTestApp();
    try {
      const client = await signedInClient(t);
      const res = await client.request('/control/v1/model');
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.name, 'brier-latest');
      assert.equal(body.id, 'brier-fake-3.0.0');
      assert.equal(body.context_limit, t.engine.limits.contextTokens);
      assert.equal(body.input_limit, t.engine.limits.inputTokens);
      assert.equal(body.card, null);
    } finally {
      await t.close();
    }
  });

  test("the model card from the server's card folder: its title and Markdown", async () => {
    const t = await makeTestApp({ modelCardDir: card.dir });
    try {
      const client = await signedInClient(t);
      const body = await (await client.request('/control/v1/model')).json();
      assert.equal(body.card.title, 'Test model card');
      assert.equal(body.card.markdown, '# Test model card\n\nWhat it is for.\n');
    } finally {
      await t.close();
    }
  });
});
