import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ask, ROUTING } from '../../../../test/fixtures/teach.ts';
import { makeTestApp, signedInClient, type TestApp } from '../../../../test/harness.ts';

describe('GET /control/v1/calibration 200', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('outcomes that contradict what was served show drift, with weekly Brier and ECE and reliability bins', async () => {
    assert.equal((await t.req('/control/v1/retention', { method: 'PUT', body: { days: 7 } })).status, 200);
    for (let i = 0; i < 40; i++) {
      const { requestId, json } = await ask(t, t.key, `ticket ${i}: I was charged twice`, { team: ROUTING });
      // The truth is always the label the model found least likely.
      const probs = json.answers.team.probabilities as Record<string, number>;
      const least = Object.entries(probs).sort((a, b) => a[1] - b[1])[0]?.[0];
      const res = await t.req('/control/v1/outcomes', {
        body: { request_id: requestId, question_id: 'team', label: least },
      });
      assert.equal(res.status, 201);
    }
    const report = await (await t.req('/control/v1/calibration')).json();
    assert.deepEqual(report.drift, { window: 50, min_outcomes: 30, ece: 0.1, floor_factor: 2 });
    const team = report.templates[0];
    assert.equal(team.question.instructions, ROUTING.instructions);
    assert.equal(team.overall.n, 40);
    assert.equal(team.overall.accuracy, 0);
    assert.equal(team.drifted, true, team.reason);
    assert.match(team.reason, /^drifted: the last 40 outcomes have ECE/);
    assert.equal(team.weekly.length, 1);
    assert.equal(team.weekly[0].n, 40);
    assert.equal(team.reliability.length, 15);
    assert.deepEqual(team.served_by, ['brier-fake-3.0.0']);
    const other = await signedInClient(t);
    assert.deepEqual((await (await other.request('/control/v1/calibration')).json()).templates, []);
  });
});
