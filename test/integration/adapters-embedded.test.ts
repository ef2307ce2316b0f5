/**
 * Real training on real rows: the embedded engine (USE-lite, one encoder thread) featurizes the
 * examples, the child process fits a probe on the state embeddings, and the adapter serves through
 * /v1/systemone with the same features. Generated tickets always; a few dozen rows of a shared set the
 * shipped head never trained on when ../shared is there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FitRequest } from '../../src/engines/adapters/fit-protocol.ts';
import { createFeaturizedEmbeddedEngine } from '../../src/engines/embedded/featurized.ts';
import { createForkFitter, type Fitter } from '../../src/jobs/fitter.ts';
import { toDecisionRequest } from '../../src/systemone/normalize.ts';
import { jsonl, ROUTING, row, sharedRows, tickets, upload } from '../fixtures/teach.ts';
import { makeTestApp, type TestApp } from '../harness.ts';

async function trainAndServe(t: TestApp, rows: unknown[], question: Record<string, unknown>) {
  const up = await upload(t, jsonl(rows));
  assert.equal(up.status, 201, await up.clone().text());
  const template = (await up.json()).templates[0].id;
  const queued = await t.req('/control/v1/training-jobs', { body: {} });
  assert.equal(queued.status, 202);
  assert.equal(await t.runner.runOnce(), true);
  const job = await (await t.req(`/control/v1/training-jobs/${(await queued.json()).id}`)).json();
  assert.equal(job.status, 'succeeded', job.message);
  const report = job.result.templates.find((r: { template: string }) => r.template === template);
  return { job, report, question };
}

describe('adapters on the embedded engine: a probe on the state embedding', () => {
  let t: TestApp;
  // The real fitting process; the last request it was given is kept for inspection.
  let lastFit: FitRequest | undefined;
  const fitter: Fitter = (request, onProgress, signal) => {
    lastFit = request;
    return createForkFitter(2)(request, onProgress, signal);
  };
  before(async () => {
    t = await makeTestApp({ engine: createFeaturizedEmbeddedEngine({ threads: 1 }), fitter });
  });
  after(() => t.close());

  test('60 generated tickets: the probe is fitted, better held out, and served with x_answered_by', async () => {
    const rows = tickets(60).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
    const { job, report } = await trainAndServe(t, rows, ROUTING);
    assert.equal(report.kind, 'probe', JSON.stringify(report.candidates));
    // the job's report names the candidate it served (45 examples to train on: under LDA's 100)
    assert.match(report.chosen, /^probe( \+ label prior)? \(L2 /);
    assert.ok(report.candidates.some((c: { name: string }) => c.name === report.chosen));
    assert.equal(report.served, true, report.reason);
    assert.ok(report.after.accuracy >= report.before.accuracy, report.reason);
    const res = await t.req('/v1/systemone', {
      body: { model: job.adapter_id, state: 'refund my last payment please', questions: { team: ROUTING } },
    });
    const json = await res.json();
    assert.equal(json.answers.team.x_answered_by, job.adapter_id);
    assert.equal(json.answers.team.choice, 'billing');
    console.log(`# tickets: ${report.reason}`);
  });

  test('a choice template is fitted with its options embedded as the states are, in canonical class order', async () => {
    const rows = tickets(30).map((x) => row(x.state, { team: ROUTING }, { team: x.team }));
    await trainAndServe(t, rows, ROUTING);
    const fitted = lastFit?.templates.find((x) => x.type === 'choice');
    assert.deepEqual(fitted?.labels, ['billing', 'other', 'tech']);
    const features = t.engine.features;
    assert.ok(features);
    // Each class's label prior is the embedding of the option's text, as a state of that text would read.
    const texts = ['billing: charges and refunds', 'other', 'tech: bugs and outages'];
    for (const [c, text] of texts.entries()) {
      const expected = await features.state(toDecisionRequest(text, []));
      assert.deepEqual(fitted?.labelStates?.[c], expected, `class ${fitted?.labels[c]}`);
    }
  });

  test('a shared set the shipped head never trained on (sst2, 100 rows): held-out before and after, served only past the gate', async (ctx) => {
    // Every 20th row of the set (its rows are grouped by label).
    const shared = sharedRows('sst2', 2000)?.filter((_, i) => i % 20 === 0);
    if (!shared) {
      ctx.skip('../shared/data/decisions is absent');
      console.log('# skipped: subj rows (../shared/data/decisions is absent)');
      return;
    }
    const rows = shared.map((r) => row(r.state, { q: r.question }, { q: r.label }));
    const { report } = await trainAndServe(t, rows, shared[0]?.question ?? {});
    console.log(
      `# sst2 (100 rows): ${report.reason}; accuracy ${report.before.accuracy.toFixed(2)} -> ${report.after.accuracy.toFixed(2)}`,
    );
    assert.equal(report.n, 100);
    // a yes/no template's option features too (the shared model reads them): its instruction as its yes
    const yesNo = lastFit?.templates.find((x) => x.type === 'noul');
    assert.ok(yesNo?.labelStates?.some((e) => e !== null && e.length > 0));
    // cross-fitting: every example measured, by a fit that did not see it
    assert.equal(report.nTest, 100);
    // The base model (brier-lite 4) answers sst2 at 0.75 zero-shot: an adapter from 100 examples is
    // served only where it beats that by more than chance (issue 39), else the base model answers.
    if (report.served) assert.ok(report.after.brier < report.before.brier, report.reason);
    else
      assert.match(
        report.reason,
        /^not served: (not better than the base model|better than the base model on 100 held-out examples by too little)/,
      );
  });
});
