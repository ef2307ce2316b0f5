import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyHead, parseAdapter } from '../engines/adapters/adapter.ts';
import { mulberry32 } from '../lib/seeded.ts';
import {
  adapterFile,
  fitAdapter,
  fitTemperature,
  fitTemplate,
  pickArm,
  rowSpan,
  servingGate,
  splitRows,
  type TemplateData,
} from './adapter-fit.ts';

const DIM = 512;

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return v.map((x) => x / n);
}

/** States near one of k class directions (noise `noise`), and a base model that knows nothing (uniform). */
function synthetic(k: number, n: number, noise: number, seed = 1): TemplateData {
  const random = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
  const centers = Array.from({ length: k }, () => unit(Float32Array.from({ length: DIM }, gauss)));
  const rows = Array.from({ length: n }, (_, i) => {
    const label = i % k;
    const c = centers[label] as Float32Array;
    const state = unit(Float32Array.from({ length: DIM }, (_, d) => (c[d] ?? 0) + (noise * gauss()) / Math.sqrt(DIM)));
    return { base: new Array(k).fill(1 / k), state, label };
  });
  return {
    template: `tpl_synthetic_${k}_${seed}`,
    type: 'choice',
    labels: Array.from({ length: k }, (_, j) => `c${j}`),
    rows,
  };
}

describe('adapter fitting', () => {
  test('a probe learns a task the base model knows nothing of, and is served', () => {
    const { head, report } = fitTemplate(synthetic(3, 60, 3));
    assert.ok(head, report.reason);
    assert.equal(report.kind, 'probe');
    assert.match(report.chosen ?? '', /^probe \(L2 /);
    assert.equal(report.served, true);
    // cross-fitting: every example measured once, by a fit that did not see it; the head served is fitted on all
    assert.equal(report.nTest, 60);
    assert.equal(report.nTrain, 60);
    assert.ok((report.after?.accuracy ?? 0) > 0.8, `held-out accuracy ${report.after?.accuracy}`);
    assert.ok((report.after?.brier ?? 1) < (report.before?.brier ?? 0));
    assert.match(
      report.reason,
      /^served: better than the base model on 60 held-out examples by more than chance \(the probe \(L2 [\d.e-]+\): Brier 0\.2222 -> [\d.]+, the gain's 90% paired-bootstrap lower bound 0\.\d+ > 0; NLL /,
    );
    assert.equal(report.reliability?.after?.length, 15);
  });

  test('a shrinkage LDA head is a candidate, and what is served answers as the discriminant does', () => {
    // no probe penalties: the discriminants compete with the calibration alone
    // 160 examples: the served fit has 160 rows, each cross-fitting round 106 or 107 (LDA needs 100)
    const { head, report } = fitTemplate(synthetic(4, 160, 3, 5), { lambdas: [] });
    assert.ok(head, report.reason);
    const names = report.candidates.map((c) => c.name);
    assert.deepEqual(
      names.filter((n) => n.startsWith('shrinkage LDA')),
      ['shrinkage LDA (gamma 0.6)', 'shrinkage LDA (gamma 0.8)', 'shrinkage LDA (gamma 0.9)'],
    );
    assert.ok(!names.some((n) => n.startsWith('probe')));
    // served as a probe head (weights on the state), right on the held-out rows
    assert.equal(report.kind, 'probe');
    assert.match(report.chosen ?? '', /^shrinkage LDA \(gamma 0\.[689]\)$/);
    assert.ok((report.after?.accuracy ?? 0) > 0.8, `held-out accuracy ${report.after?.accuracy}`);
    assert.ok((report.after?.nll ?? 9) < (report.before?.nll ?? 0));
    // with fewer than 100 rows to train on, no discriminant is tried
    const few = fitTemplate(synthetic(4, 96, 3, 5));
    assert.ok(!few.report.candidates.some((c) => c.name.startsWith('shrinkage LDA')));
    assert.ok(few.report.candidates.some((c) => c.name.startsWith('probe')));
  });

  test('without state features, a temperature fixes an overconfident base model (calibration only)', () => {
    const random = mulberry32(7);
    // The base model is right 70% of the time but says 0.97.
    const rows = Array.from({ length: 200 }, () => {
      const label = random() < 0.5 ? 1 : 0;
      const said = random() < 0.7 ? label : 1 - label;
      const base = said === 1 ? [0.03, 0.97] : [0.97, 0.03];
      return { base, state: null, label };
    });
    const { head, report } = fitTemplate({ template: 'tpl_over', type: 'noul', labels: ['false', 'true'], rows });
    assert.ok(head, report.reason);
    assert.equal(report.kind, 'calibration');
    assert.ok(
      (report.after?.ece ?? 1) < (report.before?.ece ?? 0) / 2,
      `ECE ${report.before?.ece} -> ${report.after?.ece}`,
    );
    assert.ok(head.baseWeight > 0 && head.baseWeight < 0.5, `the base log-odds shrink (a = ${head.baseWeight})`);
  });

  test('an adapter that is not better on the held-out rows is not served, and says so', () => {
    // Balanced labels independent of the states: nothing to learn; the base answer (uniform) is already right.
    const data = synthetic(2, 40, 3, 3);
    const random = mulberry32(11);
    const labels = data.rows.map((_, i) => i % 2).sort(() => random() - 0.5);
    data.rows.forEach((r, i) => {
      r.label = labels[i] ?? 0;
    });
    const { head, report } = fitTemplate(data);
    assert.equal(head, null);
    assert.equal(report.served, false);
    assert.match(report.reason, /^not served: not better than the base model on \d+ (held-out|training) examples/);
  });

  test('too few examples, or a single label, are not fitted', () => {
    const few = fitTemplate(synthetic(2, 12, 1));
    assert.match(few.report.reason, /12 labelled examples, at least 20 are needed/);
    const one = synthetic(2, 30, 1);
    for (const r of one.rows) r.label = 0;
    assert.match(fitTemplate(one).report.reason, /same label/);
  });

  test('the split is stratified, seeded and disjoint', () => {
    const labels = Array.from({ length: 40 }, (_, i) => (i < 30 ? 0 : 1));
    const a = splitRows(labels, 0.25, 3, 5);
    const b = splitRows(labels, 0.25, 3, 5);
    assert.deepEqual(a.test, b.test);
    assert.equal(a.test.filter((i) => labels[i] === 1).length, 3);
    assert.equal(a.test.filter((i) => labels[i] === 0).length, 8);
    assert.equal(new Set([...a.test, ...a.train]).size, 40);
  });

  test('the served artifact answers exactly as measured', () => {
    const data = synthetic(4, 60, 2, 9);
    const { head } = fitTemplate(data);
    assert.ok(head);
    const adapter = parseAdapter(JSON.parse(JSON.stringify(adapterFile('base-1', 'use-lite-512', [head]))));
    const served = adapter.heads.get(data.template);
    assert.ok(served);
    const row = data.rows[0];
    assert.ok(row);
    const p = applyHead(served, row.base, row.state);
    assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    assert.equal(adapter.features, 'use-lite-512');
  });

  test('a label prior lifts a many-class task with few examples per class, and is served in the weights', () => {
    // 24 classes, 4 examples each (3 to train on); each class's label features point at its centre.
    const k = 24;
    const data = synthetic(k, k * 4, 6, 21);
    const centres: Float32Array[] = [];
    for (let j = 0; j < k; j++) {
      const mean = new Float32Array(DIM);
      const rows = data.rows.filter((r) => r.label === j);
      for (const r of rows) for (let d = 0; d < DIM; d++) mean[d] = (mean[d] ?? 0) + (r.state?.[d] ?? 0);
      centres.push(unit(mean));
    }
    const without = fitTemplate(data).report;
    const withPrior = fitTemplate({ ...data, labelStates: centres });
    assert.ok(withPrior.head, withPrior.report.reason);
    const a0 = without.after?.accuracy ?? 0;
    const a1 = withPrior.report.after?.accuracy ?? 0;
    assert.ok(a1 >= a0 + 0.15, `held-out accuracy ${a0} -> ${a1}`);
    // the prior is folded into the probe weights: the served head alone reproduces the measured answers
    const adapter = parseAdapter(JSON.parse(JSON.stringify(adapterFile('base-1', 'use-lite-512', [withPrior.head]))));
    const head = adapter.heads.get(data.template);
    assert.ok(head);
    const correct = data.rows.filter((r) => {
      const p = applyHead(head, r.base, r.state);
      return p.indexOf(Math.max(...p)) === r.label;
    }).length;
    assert.ok(correct / data.rows.length > a0, `served accuracy ${correct / data.rows.length}`);
  });

  test('with label features the probe is cross-validated with and without its label prior, and the lower NLL is served', () => {
    // Label features unrelated to the classes (random directions) on a task with about 27 examples a
    // class, noisy enough that no probe separates it perfectly (where every NLL is ~0, the order is noise).
    const data = synthetic(3, 80, 6, 9);
    const random = mulberry32(4);
    const gauss = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
    const unrelated = [0, 1, 2].map(() => unit(Float32Array.from({ length: DIM }, gauss)));
    const { head, report } = fitTemplate({ ...data, labelStates: unrelated });
    const names = report.candidates.map((c) => c.name);
    assert.ok(names.includes('probe (L2 0.01)') && names.includes('probe + label prior (L2 0.01)'), names.join(', '));
    const best = report.candidates.reduce((a, b) => (b.nll < a.nll ? b : a));
    assert.doesNotMatch(best.name, /label prior/, JSON.stringify(report.candidates));
    // the plain probe was served: the same head as a fit without label features
    assert.ok(head, report.reason);
    assert.deepEqual(head, fitTemplate(data).head);
  });

  test("a distilled yes/no template's option features are not its own probe's label prior (as in a template's own fit)", () => {
    const data = synthetic(2, 60, 3, 13);
    const template: TemplateData = {
      ...data,
      type: 'noul',
      labels: ['false', 'true'],
      rows: data.rows.map((r) => ({ ...r, target: r.label === 1 ? [0.2, 0.8] : [0.8, 0.2], source: 'teacher' })),
      labelStates: [null, new Float32Array(DIM).fill(0.04)],
    };
    const { reports } = fitAdapter([template], { distill: { teacher: 't', humanWeight: 1 } });
    const names = reports[0]?.candidates.map((c) => c.name) ?? [];
    assert.ok(
      names.some((n) => n.startsWith('probe (L2 ')),
      names.join(', '),
    );
    assert.ok(!names.some((n) => n.includes('label prior')), names.join(', '));
  });

  test('a class without label features, or features of another size, do not stop the fit', () => {
    const data = synthetic(3, 60, 3, 5);
    const partial = fitTemplate({ ...data, labelStates: [new Float32Array(DIM).fill(0.04), null, null] });
    assert.ok(partial.head, partial.report.reason);
    const wrong = fitTemplate({ ...data, labelStates: [new Float32Array(7), null, null] });
    assert.ok(wrong.head, wrong.report.reason);
    assert.equal(wrong.report.after?.accuracy, fitTemplate(data).report.after?.accuracy);
  });

  test('probes fitted in the span of the states give the head fitted in the full dimensions', () => {
    // 60 rows of 512 dimensions: the probes see 60 coordinates instead of 512
    for (const [data, labelStates] of [
      [synthetic(3, 60, 3, 2), undefined],
      [synthetic(4, 48, 4, 6), undefined],
      [
        synthetic(3, 80, 3, 9),
        [0, 1, 2].map((j) => unit(Float32Array.from({ length: DIM }, (_, d) => ((d * (j + 3)) % 7) - 3))),
      ],
    ] as const) {
      const t = { ...data, labelStates: labelStates ? [...labelStates] : undefined };
      const projected = fitTemplate(t);
      const primal = fitTemplate(t, { project: false });
      assert.equal(projected.report.chosen, primal.report.chosen);
      projected.report.candidates.forEach((c, i) => {
        assert.ok(Math.abs(c.nll - (primal.report.candidates[i]?.nll ?? 0)) < 2e-3, `${c.name}: ${c.nll}`);
      });
      assert.ok(projected.head && primal.head);
      const a = parseAdapter(adapterFile('b', 'f', [projected.head])).heads.get(t.template);
      const b = parseAdapter(adapterFile('b', 'f', [primal.head])).heads.get(t.template);
      assert.ok(a && b);
      assert.equal(a.dim, DIM);
      for (const r of t.rows) {
        const pa = applyHead(a, r.base, r.state);
        const pb = applyHead(b, r.base, r.state);
        pa.forEach((p, j) => {
          assert.ok(Math.abs(p - (pb[j] ?? 0)) < 5e-3, `${p} against ${pb[j]}`);
        });
      }
    }
  });

  test('rowSpan: an orthonormal basis of the rows and their exact coordinates; dependent rows add none', () => {
    const random = mulberry32(5);
    const d = 16;
    const rows = new Float64Array(5 * d).map(() => random() - 0.5);
    // row 4 = row 0 + 2 row 1: in the span already
    for (let t = 0; t < d; t++) rows[4 * d + t] = (rows[t] ?? 0) + 2 * (rows[d + t] ?? 0);
    const { basis, coords, r } = rowSpan(rows, 5, d);
    assert.equal(r, 4);
    for (let a = 0; a < r; a++)
      for (let b = 0; b < r; b++) {
        let dot = 0;
        for (let t = 0; t < d; t++) dot += (basis[a * d + t] ?? 0) * (basis[b * d + t] ?? 0);
        assert.ok(Math.abs(dot - (a === b ? 1 : 0)) < 1e-12);
      }
    for (let i = 0; i < 5; i++)
      for (let t = 0; t < d; t++) {
        let v = 0;
        for (let q = 0; q < r; q++) v += (coords[i * r + q] ?? 0) * (basis[q * d + t] ?? 0);
        assert.ok(Math.abs(v - (rows[i * d + t] ?? 0)) < 1e-12);
      }
  });

  test('the L2 grid reaches 1e-4, for many classes with few rows each', () => {
    const { report } = fitTemplate(synthetic(3, 60, 3));
    assert.ok(
      report.candidates.some((c) => c.name === 'probe (L2 0.0001)'),
      JSON.stringify(report.candidates),
    );
    assert.ok(report.candidates.some((c) => c.name === 'probe (L2 0.1)'));
  });

  test('fitTemperature finds the temperature that generated the labels', () => {
    const random = mulberry32(3);
    const z: number[][] = [];
    const y: number[] = [];
    for (let i = 0; i < 4000; i++) {
      const logit = (random() - 0.5) * 8;
      const p = 1 / (1 + Math.exp(-logit / 2));
      z.push([0, logit]);
      y.push(random() < p ? 1 : 0);
    }
    const t = fitTemperature(z, y);
    assert.ok(Math.abs(t - 2) < 0.2, `T = ${t}`);
  });

  test('the serving gate wants 30 held-out rows and a paired-bootstrap margin: a small gain on 12 rows is not enough, on 400 it is', () => {
    // the adapter says [0.4, 0.6] everywhere: right on two rows in three
    const items = (n: number, p: number) =>
      Array.from({ length: n }, (_, i) => ({ p: [1 - p, p], t: i % 3 === 0 ? [1, 0] : [0, 1] }));
    // the base says 0.5 everywhere; the adapter is right on two rows in three with 0.6, wrong on one with 0.6
    const base = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ p: [0.5, 0.5], t: i % 3 === 0 ? [1, 0] : [0, 1] }));
    // under 30 held-out rows the gate does not decide: 20 rows that all improved are no evidence
    const twenty = servingGate(
      base(20),
      items(20, 0.6).map((x) => ({ ...x, p: x.t[0] === 1 ? [0.6, 0.4] : [0.4, 0.6] })),
      1,
      'probe',
    );
    assert.ok(twenty.brierGain > 0);
    assert.equal(twenty.served, false);
    assert.match(
      twenty.why,
      /^not served: 20 held-out examples, at least 30 are needed to tell a gain from chance \(the probe: /,
    );
    // with a floor of 10, 5 rows are still too few
    const five = servingGate(
      base(5),
      items(5, 0.6).map((x) => ({ ...x, p: x.t[0] === 1 ? [0.6, 0.4] : [0.4, 0.6] })),
      1,
      'probe',
      { minRows: 10 },
    );
    assert.ok(five.brierGain > 0);
    assert.equal(five.served, false);
    assert.match(
      five.why,
      /^not served: 5 held-out examples, at least 10 are needed to tell a gain from chance \(the probe: /,
    );
    // past a floor of 10, the bootstrap's bound decides: a small gain on 12 rows is too little
    const few = servingGate(base(12), items(12, 0.6), 1, 'probe', { minRows: 10 });
    assert.ok(few.brierGain > 0 && few.nllGain > 0);
    assert.equal(few.served, false);
    assert.match(
      few.why,
      /^not served: better than the base model on 12 held-out examples by too little to tell from chance \(the probe: /,
    );
    const many = servingGate(base(400), items(400, 0.6), 1, 'probe');
    assert.equal(many.served, true);
    assert.ok(many.brierLower > 0 && many.brierLower < many.brierGain);
    const worse = servingGate(items(400, 0.6), base(400), 1, 'probe');
    assert.equal(worse.served, false);
    assert.match(worse.why, /^not served: not better than the base model on 400 held-out/);
  });

  test('a head reads the features past the prefix (MiniLM) only where they measurably help', () => {
    // the class signal in the prefix (the first 256 features) and noise past it, or the other way round
    const halves = (signalFirst: boolean, seed: number): TemplateData => {
      const t = synthetic(2, 120, 3, seed);
      const random = mulberry32(seed + 100);
      const noise = () => Float32Array.from({ length: DIM / 2 }, () => (random() - 0.5) / 8);
      const rows = t.rows.map((r) => {
        const signal = (r.state as Float32Array).subarray(0, DIM / 2);
        const state = new Float32Array(DIM);
        state.set(signalFirst ? signal : noise(), 0);
        state.set(signalFirst ? noise() : signal, DIM / 2);
        return { ...r, state };
      });
      return { ...t, rows };
    };
    const prefix = { dim: DIM / 2, name: 'the first half' };
    const cheap = fitTemplate(halves(true, 7), { prefix });
    assert.ok(cheap.head, cheap.report.reason);
    assert.equal(cheap.head.dim, DIM / 2);
    assert.match(cheap.report.chosen ?? '', / on the first half alone$/);
    // both fits' candidates are listed, the one chosen among them
    const names = cheap.report.candidates.map((c) => c.name);
    assert.ok(names.includes(cheap.report.chosen ?? ''), names.join());
    assert.ok(names.some((n) => n.startsWith('probe') && !n.endsWith(' alone')));
    assert.equal(names.filter((n) => n === 'calibration').length, 1);
    assert.match(
      cheap.report.reason,
      /^served: .*; it reads the first half alone: on 120 held-out examples, every feature was not better by more than chance \(Brier gain -?[\d.]+\), and the first half alone costs one encoding less when served$/,
    );
    // the served head answers from the prefix alone: what follows it does not move its answer
    const served = parseAdapter(adapterFile('base', 'f', [cheap.head])).heads.get(cheap.report.template);
    assert.ok(served);
    const row = halves(true, 7).rows[0];
    const state = Float32Array.from(row?.state ?? []);
    const before = applyHead(served, row?.base ?? [], state);
    state.fill(9, DIM / 2);
    assert.deepEqual(applyHead(served, row?.base ?? [], state), before);

    const full = fitTemplate(halves(false, 8), { prefix });
    assert.ok(full.head, full.report.reason);
    assert.equal(full.head.dim, DIM);
    assert.doesNotMatch(full.report.chosen ?? '', / alone$/);
    assert.match(
      full.report.reason,
      /; it reads every feature: on 120 held-out examples, better than on the first half alone by more than chance \(Brier gain 0\.\d+, its lower bound 0\.\d+\)$/,
    );
    // without a prefix, nothing is refitted and nothing said
    const plain = fitTemplate(halves(true, 7));
    assert.equal(plain.head?.dim, DIM);
    assert.doesNotMatch(plain.report.reason, /reads/);
  });

  test("the prefix's head is served where it passes the gate; the head on every feature only where it alone does", () => {
    const arm = (name: string, served: boolean) => ({ name, gate: { served } });
    assert.equal(pickArm(arm('full', true), arm('prefix', true)).name, 'prefix');
    assert.equal(pickArm(arm('full', false), arm('prefix', true)).name, 'prefix');
    assert.equal(pickArm(arm('full', true), arm('prefix', false)).name, 'full');
    // neither served: the prefix's reason is reported
    assert.equal(pickArm(arm('full', false), arm('prefix', false)).name, 'prefix');
    assert.equal(pickArm(arm('full', true), null).name, 'full');
  });

  test('the base model is a candidate, and where nothing beats it the template is not served', () => {
    // targets that are the base model's own answers (a teacher's, issue 34): nothing to correct, the
    // base model is the cross-entropy's minimum, and every other candidate can only tie or lose to it
    const data = synthetic(3, 90, 3, 7);
    const random = mulberry32(17);
    for (const r of data.rows) {
      const e = [0, 1, 2].map(() => Math.exp(3 * random()));
      const sum = e.reduce((x, y) => x + y, 0);
      r.base = e.map((v) => v / sum);
      r.label = r.base.indexOf(Math.max(...r.base));
      Object.assign(r, { target: r.base });
    }
    const { head, report } = fitTemplate(data);
    assert.equal(head, null);
    assert.equal(report.candidates[0]?.name, 'base model');
    assert.equal(report.chosen, 'base model');
    assert.equal(report.served, false);
    assert.match(
      report.reason,
      /^not served: not better than the base model on 90 training examples \(no candidate's cross-validated NLL is below the base model's [\d.]+\), so the base model answers$/,
    );
  });

  test("an account's templates with few examples each are fitted by one shared model, and served as measured", () => {
    // 12 yes/no templates, 10 examples each, one task the base model knows nothing of
    const templates = Array.from({ length: 12 }, (_, i) => {
      const t = synthetic(2, 10, 2, 100 + i);
      return { ...t, type: 'noul' as const, labels: ['no', 'yes'], template: `tpl_small_${i}` };
    });
    // the same class directions in every template: the seed-100 template's rows, relabelled per template
    const shape = synthetic(2, 120, 2, 100);
    templates.forEach((t, i) => {
      t.rows = shape.rows.slice(i * 10, i * 10 + 10);
    });
    const result = fitAdapter(templates, { minExamples: 20 });
    assert.equal(result.reports.length, 12);
    for (const r of result.reports) {
      assert.match(r.chosen ?? '', /^shared over 12 templates/);
      assert.match(
        r.reason,
        /^served: better than the base model on 120 held-out examples by more than chance \(the shared model, gated over the examples of the 12 templates with under 20 examples: Brier 0\.2500 -> [\d.]+, .*\(10 examples here, under the 20 a template's own adapter needs\)$/,
      );
    }
    assert.equal(result.heads.length, 12);
    // the served head answers a held-out state of its template as the report measured
    const head = parseAdapter(adapterFile('m', 'f', result.heads)).heads.get('tpl_small_0');
    assert.ok(head);
    const right = shape.rows.filter((r) => (applyHead(head, r.base, r.state)[r.label] ?? 0) > 0.5).length;
    assert.ok(right / shape.rows.length > 0.8, `shared accuracy ${right / shape.rows.length}`);
    // without the shared model, a template of 10 examples has too few for a head of its own
    const alone = fitAdapter(templates, { minExamples: 20, shared: false });
    assert.equal(alone.heads.length, 0);
    assert.match(alone.reports[0]?.reason ?? '', /^not fitted: 10 labelled examples, at least 20 are needed/);
    // a fitting child's share: the same heads for its templates, the shared model read from all of them
    const share = fitAdapter(templates, { minExamples: 20, only: ['tpl_small_3'] });
    assert.deepEqual(
      share.reports.map((r) => r.template),
      ['tpl_small_3'],
    );
    assert.deepEqual(
      share.heads,
      result.heads.filter((h) => h.template === 'tpl_small_3'),
    );
  });

  test('the shared model is a candidate of a template with enough examples of its own', () => {
    const shape = synthetic(2, 160, 2, 200);
    const templates = [0, 1, 2, 3].map((i) => ({
      ...shape,
      type: 'noul' as const,
      labels: ['no', 'yes'],
      template: `tpl_big_${i}`,
      rows: shape.rows.slice(i * 40, i * 40 + 40),
    }));
    const result = fitAdapter(templates);
    for (const r of result.reports) assert.ok(r.candidates.some((c) => c.name.startsWith('shared over 4 templates')));
  });

  test("the shared model reads choice options' embeddings: templates with different options borrow from each other", () => {
    // 8 choice templates of 3 options each, 9 examples a template; a state lies near its true option's
    // embedding, which differs from template to template; the base model knows nothing
    const random = mulberry32(31);
    const gauss = () => Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
    const templates: TemplateData[] = Array.from({ length: 8 }, (_, t) => {
      const options = [0, 1, 2].map(() => unit(Float32Array.from({ length: DIM }, gauss)));
      const rows = Array.from({ length: 9 }, (_, i) => {
        const label = i % 3;
        const c = options[label] as Float32Array;
        const state = unit(
          Float32Array.from({ length: DIM }, (_, d) => (c[d] ?? 0) + (1.5 * gauss()) / Math.sqrt(DIM)),
        );
        return { base: [1 / 3, 1 / 3, 1 / 3], state, label };
      });
      return { template: `tpl_options_${t}`, type: 'choice', labels: ['a', 'b', 'c'], rows, labelStates: options };
    });
    const result = fitAdapter(templates, { minExamples: 20 });
    assert.equal(result.heads.length, 8, JSON.stringify(result.reports.map((r) => r.reason)));
    for (const r of result.reports) {
      assert.match(r.chosen ?? '', /^shared over 8 templates/);
      assert.ok((r.after?.brier ?? 1) < (r.before?.brier ?? 0));
    }
  });
});
