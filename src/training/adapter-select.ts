/**
 * The selection of adapter fitting: a template's rows split into a held-out part and training folds
 * (splitRows), its candidates compared by cross-validated NLL on the training rows (fitOnRows): the
 * base model itself (adapter-calibration.ts), calibration, probes (adapter-probe.ts), shrinkage LDA
 * (adapter-lda.ts) and the account's shared model (adapter-shared.ts); and the serving gate
 * (servingGate): a head is served only where it beats the base model on held-out rows by a paired
 * bootstrap's margin.
 */
import type { HeadFile } from '../engines/adapters/adapter.ts';
import type { FeaturePrefix } from '../engines/engine.ts';
import { brierScore, nll } from '../lib/scoring.ts';
import { mulberry32, shuffled } from '../lib/seeded.ts';
import { baseCandidate, calibrationCandidate } from './adapter-calibration.ts';
import type { Candidate, Data, TemplateData } from './adapter-data.ts';
import { ldaCandidates } from './adapter-lda.ts';
import { fit, headFile } from './adapter-linear.ts';
import { probeCandidates } from './adapter-probe.ts';
import type { MetricItem } from './evaluation.ts';

export interface FitOptions {
  /** Outer folds of cross-fitting (adapter-fit.ts OUTER_FOLDS, default 5): every example measured once. */
  outerFolds?: number;
  /** Distillation's share of a template's teacher rows held out for measurement (default 0.25). */
  holdout?: number;
  /** Fewest examples a template needs (default 20). */
  minExamples?: number;
  /** L2 penalties tried for the probe (default 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1). */
  lambdas?: readonly number[];
  /** Upper bound on L-BFGS iterations per fit (default 150). */
  maxIterations?: number;
  /**
   * The served head: 'all' refits the chosen candidate on every training row (default); 'folds' serves
   * the mean of its cross-validation fold fits, the models its temperature was fitted for. Measured
   * (bench:adapt --refit folds, 7 sets at 200 labels): held-out Brier within 0.001 of 'all' on each.
   */
  refit?: 'all' | 'folds';
  /** Most cross-validation folds (default 5; fewer when there are under 8 rows a fold). */
  maxFolds?: number;
  /**
   * Probes fitted in the span of the states when there are fewer rows than dimensions (default true):
   * the same fit at a fraction of the cost (see toData). False: in the features' own dimensions.
   */
  project?: boolean;
  /** Called after each fit with the share done (0..1) and what is being done. */
  onProgress?: (done: number, message: string) => void;
  /** The serving gate (servingGate): its level and fewest held-out rows. */
  gate?: GateOptions;
  /** The account's shared model over all its templates (adapter-shared.ts) as a candidate (default true). */
  shared?: boolean;
  /**
   * The features' cheaper prefix (EngineFeatures.prefix): their first `dim` come from one encoder
   * alone (the embedded engine: USE-lite's 512 of 896), so that a head reading only those costs no
   * second encoding when served. A template's own head is then also cross-fitted on them, and reads
   * every feature only where that measurably helps (adapter-fit.ts). Absent: every feature.
   */
  prefix?: FeaturePrefix | null | undefined;
  /** Distillation (issue 34): fit to a teacher's rows (fitDistilledTemplate), human labels weighted `humanWeight`. */
  distill?: { teacher: string; humanWeight: number } | undefined;
}

/**
 * The held-out split and the training folds, stratified by label and seeded by `seed`: each class's
 * rows shuffled, `holdout` of them (rounded) held out, the rest dealt into `folds` folds.
 */
export function splitRows(
  labels: readonly number[],
  holdout: number,
  folds: number,
  seed: number,
): { test: number[]; train: number[]; fold: Map<number, number> } {
  const random = mulberry32(seed);
  const byClass = new Map<number, number[]>();
  labels.forEach((y, i) => {
    byClass.set(y, [...(byClass.get(y) ?? []), i]);
  });
  const test: number[] = [];
  const train: number[] = [];
  const fold = new Map<number, number>();
  let dealt = 0;
  for (const y of [...byClass.keys()].sort((a, b) => a - b)) {
    const rows = shuffled(byClass.get(y) ?? [], random);
    const nTest = holdout > 0 && rows.length >= 2 ? Math.max(1, Math.round(holdout * rows.length)) : 0;
    test.push(...rows.slice(0, nTest));
    for (const i of rows.slice(nTest)) {
      train.push(i);
      fold.set(i, dealt++ % folds);
    }
  }
  return { test: test.sort((a, b) => a - b), train: train.sort((a, b) => a - b), fold };
}

/** A fitted head, every candidate's cross-validated NLL, and the name of the one fitted. */
export interface FittedHead {
  file: HeadFile;
  candidates: { name: string; nll: number }[];
  chosen: string;
}

/**
 * The head for `train` (row indices of `data`): candidates compared by cross-validated NLL over
 * `folds` (the base model's own NLL reported beside them), the best refit on all of `train`.
 */
export function fitOnRows(
  t: TemplateData,
  data: Data,
  train: number[],
  fold: Map<number, number>,
  folds: number,
  options: FitOptions,
  progress?: (message: string) => void,
  extra: readonly Candidate[] = [],
): FittedHead {
  const k = data.k;
  const maxIterations = options.maxIterations ?? 150;
  const trainT = train.map((i) => Array.from(data.t.subarray(i * k, (i + 1) * k)));
  const trainW = train.map((i) => data.w[i] ?? 1);
  const report: { candidates: { name: string; nll: number }[] } = { candidates: [] };
  // Candidates by cross-validated NLL on the training rows, the base model's own answer among them:
  // where nothing beats it, the head chosen is the base model and the template is not served.
  const rows = { data, train, fold, folds, targets: trainT, weights: trainW };
  const candidates: Candidate[] = [baseCandidate(rows)];
  progress?.('calibration: cross-validating');
  candidates.push(calibrationCandidate(rows, maxIterations));
  candidates.push(...probeCandidates(rows, { lambdas: options.lambdas, maxIterations }, progress));
  if (data.states) {
    progress?.('shrinkage LDA: cross-validating');
    candidates.push(...ldaCandidates(data, train, fold, folds, maxIterations));
  }
  candidates.push(...extra);
  for (const c of candidates) report.candidates.push({ name: c.name, nll: c.nll });
  // The lowest cross-validated NLL. (Measured: the one-standard-error rule, preferring the simplest
  // candidate within one standard error of it, served worse held-out Brier on sst2 at 100 and 200 rows
  // (0.151 -> 0.198, 0.175 -> 0.197) and trec at 100 (0.053 -> 0.055).)
  const best = candidates.reduce((a, b) => (b.nll < a.nll ? b : a));
  progress?.(`fitting the ${best.name} on ${train.length} rows`);
  const x =
    (options.refit ?? 'all') === 'folds'
      ? best.mean
      : (best.refit?.() ?? fit(best.data, Int32Array.from(train), best.lambda, best.probe, maxIterations));
  return {
    file: headFile(t, best.data, x, best.probe, best.temperature),
    candidates: report.candidates,
    chosen: best.name,
  };
}

/** Paired bootstrap resamples of the serving gate. */
const BOOTSTRAP_RESAMPLES = 2000;

/** The serving gate's one-sided level and the fewest held-out rows it decides on. */
export interface GateOptions {
  /**
   * Default 0.9. Measured (bench:adapt, 12 sets at 20, 50 and 200 labels, one run): at 0.95, 0.9 and 0.8
   * no set's served answer was below zero-shot on Brier or accuracy; mean served accuracy at 200 labels
   * noul 0.719 / 0.730 / 0.730, choice 0.712 / 0.737 / 0.737 (0.95 / 0.9 / 0.8), at 50 noul 0.701 /
   * 0.701 / 0.736; 0.8 is a weak bound for a rule that must keep the base model where it is unsure.
   */
  level?: number;
  /**
   * Default 30: below it a bootstrap's percentiles are no bound. On 5 held-out rows that all improved,
   * every resample improves (bench:adapt, sst2 at 20 labels, served a probe that way whose Brier on the
   * 1,000 test rows was 0.1993 against the base model's 0.1685; the floor was 10 then). With
   * cross-fitting (5 folds) at 20 labels, 2 of 12 sets passed a 10-row floor on their 20 out-of-fold
   * examples with a head worse than the base model on the test rows, both overconfident: sst2 Brier
   * 0.1700 -> 0.2207 (ECE 0.21), cr 0.1843 -> 0.2331 (ECE 0.23); the temperature of a head fitted on 20
   * rows is fitted on 2 folds of 10. At 30, CalDec as an account went 0.630 -> 0.620 (one template of
   * 27 examples no longer served).
   */
  minRows?: number;
}

export interface GateResult {
  served: boolean;
  /** Mean per-row improvement over the base model (before - after) on the held-out rows. */
  brierGain: number;
  nllGain: number;
  /** The bootstrap's lower bound (at the gate's level, one-sided) of the mean Brier improvement. */
  brierLower: number;
  why: string;
}

/**
 * The serving gate: `after` (the adapter) against `before` (the base model) on the same held-out rows.
 * Served only when there are `minRows` held-out rows, the mean Brier improvement's paired-bootstrap
 * lower bound (`level`, one-sided, rows resampled with replacement, seeded) is above 0, and the mean
 * NLL is lower too: on 9 rows a point estimate is no evidence, and the bound widens as rows get fewer.
 */
export function servingGate(
  before: readonly MetricItem[],
  after: readonly MetricItem[],
  seed: number,
  what: string,
  gate: GateOptions = {},
): GateResult {
  const n = before.length;
  const gateLevel = gate.level ?? 0.9;
  const minRows = gate.minRows ?? 30;
  const b0 = before.map((b) => brierScore(b.p, b.t));
  const b1 = before.map((b, i) => brierScore(after[i]?.p ?? b.p, b.t));
  const n0 = before.map((b) => nll(b.p, b.t));
  const n1 = before.map((b, i) => nll(after[i]?.p ?? b.p, b.t));
  const mean = (v: readonly number[]) => v.reduce((a, x) => a + x, 0) / Math.max(1, v.length);
  const db = b0.map((v, i) => v - (b1[i] ?? 0));
  const brierGain = mean(db);
  const nllGain = mean(n0) - mean(n1);
  const f = (v: number) => v.toFixed(4);
  if (n < minRows)
    return {
      served: false,
      brierGain,
      nllGain,
      brierLower: 0,
      why: `not served: ${n} held-out examples, at least ${minRows} are needed to tell a gain from chance (the ${what}: Brier ${f(mean(b0))} -> ${f(mean(b1))})`,
    };
  const random = mulberry32(seed);
  const means = new Float64Array(BOOTSTRAP_RESAMPLES);
  for (let b = 0; b < BOOTSTRAP_RESAMPLES; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += db[Math.floor(random() * n)] ?? 0;
    means[b] = s / n;
  }
  means.sort();
  const brierLower = means[Math.floor((1 - gateLevel) * BOOTSTRAP_RESAMPLES)] ?? 0;
  const served = brierLower > 0 && nllGain > 0;
  const level = `${Math.round(gateLevel * 100)}%`;
  const brier = `Brier ${f(mean(b0))} -> ${f(mean(b1))}`;
  const nllText = `NLL ${f(mean(n0))} -> ${f(mean(n1))}`;
  const bound = `the gain's ${level} paired-bootstrap lower bound ${f(brierLower)}`;
  const why = served
    ? `served: better than the base model on ${n} held-out examples by more than chance (the ${what}: ${brier}, ${bound} > 0; ${nllText})`
    : brierGain <= 0 || nllGain <= 0
      ? `not served: not better than the base model on ${n} held-out examples (the ${what}: ${brier}, ${nllText})`
      : `not served: better than the base model on ${n} held-out examples by too little to tell from chance (the ${what}: ${brier}, ${bound} <= 0; ${nllText})`;
  return { served, brierGain, nllGain, brierLower, why };
}
