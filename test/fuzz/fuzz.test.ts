/**
 * The fuzz suite: a few thousand seeded malformed and adversarial requests against every public
 * route over real HTTP (test/fuzz/bodies.ts), with the promises of test/fuzz/run.ts checked on each
 * answer. Bounded in count; it stops by itself. `npm run fuzz` runs larger, longer campaigns.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createEmbeddedEngine } from '../../src/engines/embedded/index.ts';
import { createFakeEngine } from '../../src/engines/fake/fake-engine.ts';
import { type FuzzTarget, runFuzz, startFuzzTarget } from './run.ts';

async function stillServing(target: FuzzTarget) {
  assert.equal((await fetch(`${target.url}/healthz`)).status, 200);
  const res = await fetch(`${target.url}/v1/systemone`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ state: 'still here?', questions: { q: { type: 'noul' } } }),
  });
  assert.equal(res.status, 200);
}

describe('fuzz: every public route, gateway engine', () => {
  let target: FuzzTarget | undefined;
  before(async () => {
    target = await startFuzzTarget(createFakeEngine());
  });
  after(() => target?.close());

  test('4,000 seeded bodies: no 5xx, no connection error, errors name a field and carry a request id', async () => {
    assert.ok(target, 'the server started');
    const report = await runFuzz(target, 20, 4000);
    console.log(`# fuzz (fake engine): ${report.requests} requests in ${report.seconds.toFixed(1)} s`, report.byStatus);
    assert.deepEqual(report.failures, []);
    assert.ok(Object.keys(report.byStatus).length >= 8, 'the bodies reach many different outcomes');
    await stillServing(target);
  });
});

describe('fuzz: the embedded engine behind the same routes', () => {
  let target: FuzzTarget | undefined;
  before(async () => {
    target = await startFuzzTarget(createEmbeddedEngine());
  });
  after(() => target?.close());

  test('600 seeded bodies reach the real tokenizer and renderer without a 5xx', async () => {
    assert.ok(target, 'the server started');
    const report = await runFuzz(target, 21, 600);
    console.log(
      `# fuzz (embedded engine): ${report.requests} requests in ${report.seconds.toFixed(1)} s`,
      report.byStatus,
    );
    assert.deepEqual(report.failures, []);
    assert.ok((report.byStatus['200'] ?? 0) > 0, 'some bodies were answered by the model');
    await stillServing(target);
  });
});
