import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FitTemplate } from '../engines/adapters/fit-protocol.ts';
import { mulberry32 } from '../lib/seeded.ts';
import { createForkFitter, fitProcesses, shareTemplates } from './fitter.ts';

/** A yes/no template whose base model is overconfident (a calibration fixes it): no state features. */
function template(id: string, n: number, seed: number): FitTemplate {
  const random = mulberry32(seed);
  const rows = Array.from({ length: n }, () => {
    const label = random() < 0.5 ? 1 : 0;
    const said = random() < 0.7 ? label : 1 - label;
    return { base: said === 1 ? [0.03, 0.97] : [0.97, 0.03], state: null, label };
  });
  return { template: id, type: 'noul', labels: ['false', 'true'], rows };
}

describe('the fitting step', () => {
  test('templates are dealt to the processes, the most costly first to the least loaded, each once, in job order', () => {
    const ts = [template('a', 40, 1), template('b', 400, 2), template('c', 60, 3), template('d', 300, 4)];
    const shares = shareTemplates(ts, 2);
    assert.equal(shares.length, 2);
    assert.deepEqual(
      shares.map((s) => s.map((t) => t.template)),
      [['b'], ['a', 'c', 'd']],
    );
    assert.deepEqual(
      shareTemplates(ts, 8).map((s) => s.length),
      [1, 1, 1, 1],
      'never more processes than templates',
    );
    assert.equal(shareTemplates(ts, 1)[0]?.length, 4);
  });

  test('processes per job: the cores shared by the jobs that may run at once', () => {
    assert.equal(fitProcesses(1, 2), 2);
    assert.equal(fitProcesses(2, 2), 1);
    assert.equal(fitProcesses(2, 8), 4);
    assert.equal(fitProcesses(4, 2), 1);
  });

  test('fitted in two child processes: the reports in the job order, the served heads in one artifact', async () => {
    const ts = [template('t1', 120, 5), template('t2', 120, 6), template('t3', 30, 7)];
    const seen: number[] = [];
    const result = await createForkFitter(2)(
      { type: 'fit', base: 'base-1', features: null, templates: ts, minExamples: 20 },
      (done) => seen.push(done),
      new AbortController().signal,
    );
    assert.deepEqual(
      result.reports.map((r) => r.template),
      ['t1', 't2', 't3'],
    );
    assert.ok(result.artifact);
    assert.equal(result.artifact.base, 'base-1');
    assert.equal(result.artifact.features, null);
    const served = result.reports.filter((r) => r.served).map((r) => r.template);
    assert.deepEqual(
      result.artifact.heads.map((h) => h.template),
      served,
    );
    assert.ok(served.length >= 2, JSON.stringify(result.reports.map((r) => r.reason)));
    assert.ok(seen.length > 0 && Math.max(...seen) <= 1);
  });

  test("every child reads all the job's templates (the account's shared model): the heads are those of one child", async () => {
    // yes/no templates whose answer is in 8-dimensional state features the base model ignores
    const withStates = (id: string, n: number, seed: number): FitTemplate => {
      const random = mulberry32(seed);
      const rows = Array.from({ length: n }, () => {
        const state = Float32Array.from({ length: 8 }, () => random() - 0.5);
        return { base: [0.5, 0.5], state, label: (state[0] ?? 0) > 0 ? 1 : 0 };
      });
      return { template: id, type: 'noul', labels: ['false', 'true'], rows };
    };
    const ts = [withStates('s1', 40, 1), withStates('s2', 12, 2), withStates('s3', 12, 3), withStates('s4', 40, 4)];
    const request = { type: 'fit' as const, base: 'base-1', features: 'f', templates: ts, minExamples: 20 };
    const signal = new AbortController().signal;
    const one = await createForkFitter(1)(request, () => {}, signal);
    const two = await createForkFitter(2)(request, () => {}, signal);
    assert.deepEqual(two.artifact?.heads, one.artifact?.heads);
    assert.deepEqual(
      two.reports.map((r) => r.reason),
      one.reports.map((r) => r.reason),
    );
    assert.ok(one.reports.some((r) => r.chosen?.startsWith('shared over 4 templates')));
  });
});
