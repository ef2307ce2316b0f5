/**
 * Distillation fitting (issue 34): a template's head fitted to a teacher's distributions, measured
 * against the teacher on held-out states.
 */
import { ADAPTER_FORMAT, applyHead, parseAdapter } from '../engines/adapters/adapter.ts';
import type { DistillReport, FitRow, TeacherAgreement } from '../engines/adapters/fit-protocol.ts';
import { hash32 } from '../lib/seeded.ts';
import { ownData, type TemplateData, toData } from './adapter-data.ts';
import { bins, emptyReport, measured } from './adapter-report.ts';
import { type FitOptions, fitOnRows, splitRows } from './adapter-select.ts';
import { asServed, brierScore, computeMetrics, confidencePairs, ece, majorityPrior, oneHot } from './evaluation.ts';

const argmaxOf = (p: readonly number[]) => p.reduce((best, v, j) => (v > (p[best] ?? 0) ? j : best), 0);

/** KL(t || p) in nats, p clipped at 1e-12. */
function kl(t: readonly number[], p: readonly number[]): number {
  let s = 0;
  for (let j = 0; j < t.length; j++) {
    const tj = t[j] ?? 0;
    if (tj > 0) s += tj * (Math.log(tj) - Math.log(Math.max(1e-12, p[j] ?? 0)));
  }
  return s;
}

/** Held-out measures of answers `p` against the teacher's `t` (and the true labels where known). */
export function teacherAgreement(
  items: readonly { p: readonly number[]; t: readonly number[]; truth: number | null }[],
) {
  const n = Math.max(1, items.length);
  let agree = 0;
  let brier = 0;
  let div = 0;
  let right = 0;
  let known = 0;
  for (const it of items) {
    if (argmaxOf(it.p) === argmaxOf(it.t)) agree++;
    brier += brierScore(it.p, it.t);
    div += kl(it.t, it.p);
    if (it.truth !== null) {
      known++;
      if (argmaxOf(it.p) === it.truth) right++;
    }
  }
  const pairs = confidencePairs(items.map((it) => ({ p: it.p, t: oneHot(it.t.length, argmaxOf(it.t)) })));
  const out: TeacherAgreement = {
    agreement: agree / n,
    brier: brier / n,
    kl: div / n,
    ece: ece(pairs),
    accuracy: known > 0 ? right / known : null,
  };
  return out;
}

/**
 * Fits one template from a teacher's distributions (issue 34). The teacher's rows (`source:
 * 'teacher'`, `target` its distribution) are split as labelled rows are (25% held out, stratified by
 * the teacher's argmax, seeded by the template); the head is fitted by cross-entropy to the teacher's
 * distributions on the rest, with the account's true labels as rows of their own weighted
 * `humanWeight`: a training state's label (`truth`) and the human-only rows. A held-out state's label
 * is never fitted on: it only measures accuracy against the truth of the teacher, the base model and
 * the adapter side by side. Served only when the adapter is closer to the teacher than the base model
 * on the held-out states, by both KL and Brier against the teacher's distribution.
 */
export function fitDistilledTemplate(
  t: TemplateData,
  options: FitOptions & { distill: { teacher: string; humanWeight: number } },
  progress?: (message: string) => void,
) {
  const started = performance.now();
  const minExamples = options.minExamples ?? 20;
  const { teacher, humanWeight } = options.distill;
  const k = t.labels.length;
  const { report, done } = emptyReport(t, started);
  const teacherRows = t.rows.filter((r) => r.source !== 'human' && r.target?.length === k);
  const humanRows = t.rows.filter((r) => r.source === 'human');
  if (teacherRows.length < minExamples) {
    report.reason = `not fitted: the teacher labelled ${teacherRows.length} states, at least ${minExamples} are needed`;
    return done(null);
  }
  const holdout = options.holdout ?? 0.25;
  const folds = Math.max(2, Math.min(options.maxFolds ?? 5, Math.floor((teacherRows.length * (1 - holdout)) / 8)));
  const split = splitRows(
    teacherRows.map((r) => r.label),
    holdout,
    folds,
    hash32(t.template),
  );
  // The fitted rows: the teacher's training rows, their states' true labels, the human-only rows.
  const rows: FitRow[] = split.train.map((i) => ({ ...(teacherRows[i] as FitRow), weight: 1 }));
  for (const i of split.train) {
    const r = teacherRows[i] as FitRow;
    if (r.truth !== null && r.truth !== undefined)
      rows.push({ ...r, label: r.truth, target: undefined, weight: humanWeight, source: 'human' });
  }
  for (const r of humanRows) rows.push({ ...r, target: undefined, weight: humanWeight });
  const train = rows.map((_, i) => i);
  const fold = new Map(train.map((i) => [i, i % folds]));
  const data = ownData(t, toData({ ...t, rows }, options.project));
  report.nTrain = rows.length;
  report.nTest = split.test.length;
  const fitted = fitOnRows(t, data, train, fold, folds, options, progress);
  report.candidates.push(...fitted.candidates);
  report.chosen = fitted.chosen;
  report.kind = fitted.file.kind;
  const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [fitted.file] }).heads.get(
    t.template,
  );
  if (!head) throw new Error('adapter: the fitted head did not parse');
  const ordinal = t.type === 'score';
  const held = split.test.map((i) => teacherRows[i] as FitRow);
  const base = held.map((r) => ({ p: asServed(r.base), t: r.target as number[], truth: r.truth ?? null, ordinal }));
  const adapted = held.map((r) => ({
    p: asServed(applyHead(head, r.base, r.state)),
    t: r.target as number[],
    truth: r.truth ?? null,
    ordinal,
  }));
  // The standard fields measure against the teacher's distribution (its argmax for accuracy and ECE).
  report.before = measured(base);
  report.after = measured(adapted);
  report.prior = computeMetrics(
    held.map((r) => ({
      p: majorityPrior(rows.filter((x) => x.source !== 'human').map((x) => x.target as number[])),
      t: r.target as number[],
      ordinal,
    })),
  );
  report.reliability = { before: bins(base), after: bins(adapted) };
  const truthKnown = held.filter((r) => r.truth !== null && r.truth !== undefined);
  const distill: DistillReport = {
    teacher,
    nTest: held.length,
    nTruth: truthKnown.length,
    nHuman: rows.filter((r) => r.source === 'human').length,
    humanWeight,
    base: teacherAgreement(base),
    adapter: teacherAgreement(adapted),
    teacherAccuracy:
      truthKnown.length > 0
        ? truthKnown.filter((r) => argmaxOf(r.target as number[]) === r.truth).length / truthKnown.length
        : null,
  };
  report.distill = distill;
  const a = distill.adapter as TeacherAgreement;
  const closer = a.kl < distill.base.kl && a.brier < distill.base.brier;
  report.served = closer;
  const fmt = (v: number) => v.toFixed(4);
  const measuredOn = `on ${held.length} held-out states: KL to the teacher ${fmt(distill.base.kl)} -> ${fmt(a.kl)}, Brier to the teacher ${fmt(distill.base.brier)} -> ${fmt(a.brier)}, agreement ${fmt(distill.base.agreement)} -> ${fmt(a.agreement)}`;
  report.reason = closer
    ? `served: closer to the teacher than the base model ${measuredOn}`
    : `not served: not closer to the teacher than the base model ${measuredOn}`;
  return done(closer ? fitted.file : null);
}
