/**
 * Fitting adapters (issues 23 and 39): per question template, from an account's labelled examples with
 * the base model's answers (and, on the embedded engine, its state embeddings), a head that
 * src/engines/adapters/adapter.ts serves: a correction of the base model's answer.
 *
 * Cross-fitting (fitAdapter): each template's examples are dealt into OUTER_FOLDS folds, stratified by
 * label and seeded by the template id; every example is answered once by a fit on the other folds
 * (the account's shared model refit without them too), and a last fit on every example is what is
 * served, only where the out-of-fold answers beat the base model's by a paired bootstrap's margin
 * (adapter-select.ts servingGate); otherwise the base model answers and the report says why.
 *
 * Candidates, chosen in each fit by cross-validated NLL on its rows only (adapter-select.ts):
 * - the base model itself (chosen: not served) and calibration (adapter-calibration.ts);
 * - probes on the state embedding, with and without a label prior (adapter-probe.ts);
 * - shrinkage LDA stacked on the base model (adapter-lda.ts, from 100 training rows);
 * - the account's shared model over all its templates (adapter-shared.ts, from 2 templates), which is
 *   also the only candidate of a template with fewer examples than a template of its own needs (those
 *   templates are gated together, on their examples pooled).
 * What is measured is the fitting procedure on examples it did not see; what is served is the same
 * procedure on all of them. Where the features have a cheaper prefix (FitOptions.prefix: USE-lite's
 * half of the embedded engine's), a template's own head reads past it only where that measurably
 * helps (prefixArms).
 */
import {
  ADAPTER_FORMAT,
  type AdapterFile,
  applyHead,
  type HeadFile,
  parseAdapter,
} from '../engines/adapters/adapter.ts';
import { hash32 } from '../lib/seeded.ts';
import { type Data, ownData, type TemplateData, type TemplateRow, toData } from './adapter-data.ts';
import { fitDistilledTemplate } from './adapter-distill.ts';
import { headFile } from './adapter-linear.ts';
import { bins, emptyReport, measured, type TemplateReport } from './adapter-report.ts';
import { type FitOptions, type FittedHead, fitOnRows, servingGate, splitRows } from './adapter-select.ts';
import { fitSharedModel, type SharedInput, type SharedModel } from './adapter-shared.ts';
import { asServed, computeMetrics, majorityPrior, oneHot } from './evaluation.ts';

export { fitTemperature, rowSpan, type TemplateData, type TemplateRow } from './adapter-data.ts';
export { fitDistilledTemplate, teacherAgreement } from './adapter-distill.ts';
export type { MeasuredMetrics, TemplateReport } from './adapter-report.ts';
export { type FitOptions, type FittedHead, servingGate, splitRows } from './adapter-select.ts';

export interface FitResult {
  /** Heads of the templates whose adapter is better on held-out rows (served). */
  heads: HeadFile[];
  reports: TemplateReport[];
}

/** Fewest examples of a template fitted only through the account's shared model. */
export const SHARED_MIN_EXAMPLES = 4;

/**
 * Outer folds of cross-fitting (default): every example of a template is measured once, answered by a
 * fit that never saw it, and the gate reads all of them. Measured (CalDec as an account, 38 templates
 * of 7 to 55 labelled cases, the other half's cases answered as served): a 25% hold-out left 6 to 14
 * rows a template to the gate, so a probe whose Brier went 0.2500 -> 0.1059 on 9 rows was not served,
 * and served accuracy was 0.536 (Brier 0.1177); cross-fitting with 3 folds 0.614 (0.0997). 5 folds
 * rather than 3 (bench:adapt --outer-folds, 200 labels): fits on 160 rows, not 133, judge a head fitted
 * on 200 less harshly; sst2 (0.758 -> 0.797 on the 1,000 test rows) and tweeteval_sentiment (0.546 ->
 * 0.598) were served with 5 folds and not with 3, at 1.5 times the fitting time.
 */
export const OUTER_FOLDS = 5;

/** A template's rows in one round of fitting: the rows fitted (and their folds), the rows answered. */
interface Prepared {
  data: Data;
  /** Answered by this round's fit, never fitted on (empty in the round that fits every row). */
  test: number[];
  train: number[];
  fold: Map<number, number>;
  folds: number;
}

/** Cross-validation folds for `n` rows: at most maxFolds, about 8 rows a fold, at least 2. */
function innerFolds(n: number, options: FitOptions): number {
  return Math.max(2, Math.min(options.maxFolds ?? 5, Math.floor(n / 8)));
}

/**
 * Round `round` of a template's rows: with `outer` (row -> outer fold), the rows of fold `round` are
 * answered and the others fitted; without, every row is fitted (the served head). The fitted rows'
 * folds are stratified by label and seeded by the template id and the round.
 */
function prepare(t: TemplateData, data: Data, outer: Map<number, number> | null, round: number, options: FitOptions) {
  const rows = Array.from(data.y.keys());
  const test = outer ? rows.filter((i) => outer.get(i) === round) : [];
  const train = outer ? rows.filter((i) => outer.get(i) !== round) : rows;
  const folds = innerFolds(train.length, options);
  const seed = outer ? hash32(`${t.template}#${round}`) : hash32(t.template);
  const split = splitRows(
    train.map((i) => data.y[i] ?? 0),
    0,
    folds,
    seed,
  );
  const fold = new Map(split.train.map((j) => [train[j] ?? 0, split.fold.get(j) ?? 0]));
  return { data, test, train, fold, folds } satisfies Prepared;
}

/**
 * A head fitted on every row of `t` (no hold-out: the caller measures it on rows of its own), for
 * benchmarks' learning curves. Null when there are fewer than 2 classes (hard labels only).
 */
export function fitAllRows(t: TemplateData, options: FitOptions = {}): FittedHead | null {
  // Hard labels need two classes; a teacher's distributions (targets) are fitted whatever their argmax.
  if (!twoLabels(t) && !t.rows.some((r) => r.target)) return null;
  const data = ownData(t, toData(t, options.project));
  const p = prepare(t, data, null, 0, options);
  return fitOnRows(t, data, p.train, p.fold, p.folds, options);
}

/** Rows of `t` answered by the base model, by `file`, and by the label frequencies of `prior` rows, as served. */
function answered(t: TemplateData, rows: readonly number[], file: HeadFile, priorRows: readonly number[]) {
  const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [file] }).heads.get(t.template);
  if (!head) throw new Error('adapter: the fitted head did not parse');
  const ordinal = t.type === 'score';
  const k = t.labels.length;
  const prior = majorityPrior(priorRows.map((i) => oneHot(k, t.rows[i]?.label ?? 0)));
  return rows.map((i) => {
    const row = t.rows[i] as TemplateRow;
    const target = oneHot(k, row.label);
    return {
      before: { p: asServed(row.base), t: target, ordinal },
      after: { p: asServed(applyHead(head, row.base, row.state)), t: target, ordinal },
      prior: { p: prior, t: target, ordinal },
    };
  });
}
type Answered = ReturnType<typeof answered>;

/** The report's measures of a template's out-of-fold answers (its served flag and reason are the caller's). */
function measure(report: TemplateReport, kind: HeadFile['kind'], items: Answered) {
  const before = items.map((x) => x.before);
  const after = items.map((x) => x.after);
  report.nTrain = report.n;
  report.nTest = items.length;
  report.kind = kind;
  report.before = measured(before);
  report.after = measured(after);
  report.prior = computeMetrics(items.map((x) => x.prior));
  report.reliability = { before: bins(before), after: bins(after) };
}

/** At least two labels among a template's examples (one label leaves nothing to tell apart). */
const twoLabels = (t: TemplateData) => new Set(t.rows.map((r) => r.label)).size >= 2;

/** Why a template of `n` examples is too small for a head of its own (and, `sharedFits`, for the shared model's). */
function tooFew(n: number, minExamples: number, sharedFits: boolean): string {
  return sharedFits
    ? `not fitted: ${n} labelled examples, at least ${minExamples} are needed (or ${SHARED_MIN_EXAMPLES} and a shared model over 2 templates with state features)`
    : `not fitted: ${n} labelled examples, at least ${minExamples} are needed`;
}

/** Why a template gets no head of its own or through the shared model (null: it can be fitted). */
function notFitted(t: TemplateData, minExamples: number, sharedFits: boolean): string | null {
  const n = t.rows.length;
  if (n < minExamples && !(sharedFits && n >= SHARED_MIN_EXAMPLES)) return tooFew(n, minExamples, sharedFits);
  if (!twoLabels(t)) return 'not fitted: every example has the same label, so there is nothing to hold out against';
  return null;
}

/** One round's fit of a template: its own candidates (the shared model's among them), or the shared model's head alone. */
function fitRound(
  t: TemplateData,
  p: Prepared,
  own: boolean,
  shared: SharedModel | null,
  options: FitOptions,
  progress: (message: string) => void,
): FittedHead | null {
  const candidate = shared?.candidate(t.template) ?? null;
  if (own)
    return fitOnRows(t, ownData(t, p.data), p.train, p.fold, p.folds, options, progress, candidate ? [candidate] : []);
  if (!candidate?.refit) return null;
  const file = headFile(t, candidate.data, candidate.refit(), true, candidate.temperature);
  return { file, candidates: [{ name: candidate.name, nll: candidate.nll }], chosen: candidate.name };
}

/**
 * Fits every template; the heads returned are the served ones. Cross-fitting: in each of OUTER_FOLDS
 * rounds, every template's rows of one fold are answered by what the rest fit (the shared model refit
 * on the rest of every template too), then a last round fits every row: that head is served where
 * the out-of-fold answers beat the base model's past the serving gate (adapter-select.ts), each
 * template on its own examples, templates under `minExamples` (through the shared model only) on
 * theirs pooled. `only` (a fitting child's share of the job, src/jobs/fitter.ts): the templates
 * fitted and reported; the shared model reads them all.
 */
export function fitAdapter(
  templates: readonly TemplateData[],
  options: FitOptions & { only?: readonly string[] | undefined } = {},
): FitResult {
  const minExamples = options.minExamples ?? 20;
  const only = options.only ? new Set(options.only) : null;
  const mine = only ? templates.filter((t) => only.has(t.template)) : templates;
  if (options.distill) {
    const distill = options.distill;
    const results = mine.map((t, index) =>
      fitDistilledTemplate(t, { ...options, distill }, (m) =>
        options.onProgress?.(index / mine.length, `${t.template}: ${m}`),
      ),
    );
    return { heads: results.flatMap((r) => (r.head ? [r.head] : [])), reports: results.map((r) => r.report) };
  }
  const withShared = options.shared !== false;
  const started = performance.now();
  // the shared model reads every template with rows enough; a template of its own needs minExamples
  const sharedInputs = withShared ? templates.filter((t) => t.rows.length >= SHARED_MIN_EXAMPLES && twoLabels(t)) : [];
  const byId = new Map([...sharedInputs, ...mine].map((t) => [t.template, t] as const));
  const data = new Map([...byId].map(([id, t]) => [id, toData(t, options.project)] as const));
  const outerFolds = Math.max(2, options.outerFolds ?? OUTER_FOLDS);
  const outer = new Map(
    [...data].map(([id, d]) => [id, splitRows(Array.from(d.y), 0, outerFolds, hash32(id)).fold] as const),
  );
  // this share's templates, and every template gated with them (the small ones are gated pooled)
  const pooledSmall = sharedInputs.filter((t) => t.rows.length < minExamples);
  // in the job's order, so that every child pools the small templates' examples alike
  const work = templates.filter((t) => mine.includes(t) || pooledSmall.includes(t));
  const fitted = work.map((t) => ({ t, why: notFitted(t, minExamples, withShared), items: [] as Answered }));
  const served = new Map<string, FittedHead | null>();
  const rounds = outerFolds + 1;
  for (let round = 0; round < rounds; round++) {
    const last = round === outerFolds;
    const prepared = new Map(
      [...data].map(([id, d]) => {
        const t = byId.get(id) as TemplateData;
        return [id, prepare(t, d, last ? null : (outer.get(id) ?? null), round, options)] as const;
      }),
    );
    const inputs: SharedInput[] = sharedInputs.map((t) => ({ template: t, ...(prepared.get(t.template) as Prepared) }));
    const shared =
      inputs.length >= 2
        ? fitSharedModel(inputs, {
            maxIterations: options.maxIterations,
            progress: (m) => options.onProgress?.(round / rounds, m),
          })
        : null;
    fitted.forEach((x, index) => {
      if (x.why) return;
      const p = prepared.get(x.t.template) as Prepared;
      const progress = (message: string) =>
        options.onProgress?.((round + index / work.length) / rounds, `${x.t.template}: ${message}`);
      const head = fitRound(x.t, p, x.t.rows.length >= minExamples, shared, options, progress);
      if (last) served.set(x.t.template, head);
      else if (head) x.items.push(...answered(x.t, p.test, head.file, p.train));
    });
  }
  const cheap = prefixArms(fitted, served, outer, minExamples, outerFolds, options);
  // the gate: a template of its own on its out-of-fold answers; the small ones' pooled
  const small = fitted.filter((x) => !x.why && x.t.rows.length < minExamples);
  const pooled = small.flatMap((x) => x.items);
  const smallGate =
    pooled.length > 0
      ? servingGate(
          pooled.map((x) => x.before),
          pooled.map((x) => x.after),
          hash32(small.map((x) => x.t.template).join()),
          `shared model, gated over the examples of the ${small.length} templates with under ${minExamples} examples`,
          options.gate,
        )
      : null;
  const heads: HeadFile[] = [];
  const reports: TemplateReport[] = [];
  const reported = new Set(mine);
  fitted.forEach((x) => {
    if (!reported.has(x.t)) return;
    const { report, done } = emptyReport(x.t, started);
    const head = served.get(x.t.template) ?? null;
    const result = (() => {
      if (x.why) {
        report.reason = x.why;
        return done(null);
      }
      if (!head) {
        // a small template whose job had no shared model (fewer than 2 templates with state features)
        report.reason = tooFew(x.t.rows.length, minExamples, true);
        return done(null);
      }
      // a small template: through the shared model, gated with the others pooled
      const small = x.t.rows.length < minExamples;
      const gate = small
        ? {
            served: !!smallGate?.served,
            why: `${smallGate?.why ?? 'not served'} (${x.t.rows.length} examples here, under the ${minExamples} a template's own adapter needs)`,
          }
        : gateOf(x.t, head, x.items, options);
      // the prefix's head where it answers as well (arm.use); the head on every feature where only it is served
      const arm = small ? undefined : cheap.get(x.t.template);
      const full = { head, items: x.items, gate };
      const prefix = arm?.use ? { ...arm, gate: gateOf(x.t, arm.head, arm.items, options) } : null;
      const pick = pickArm(full, prefix);
      report.candidates.push(...(arm ?? pick).head.candidates);
      report.chosen = pick.head.chosen;
      measure(report, pick.head.file.kind, pick.items);
      report.served = pick.gate.served;
      report.reason = !arm
        ? pick.gate.why
        : pick === prefix || !arm.use
          ? `${pick.gate.why}; ${arm.why}`
          : `${pick.gate.why}; it reads every feature, as the head on ${options.prefix?.name} alone was ${prefix?.gate.why}`;
      return done(pick.gate.served ? pick.head.file : null);
    })();
    if (result.head) heads.push(result.head);
    reports.push(result.report);
    options.onProgress?.(1, `${x.t.template}: ${result.report.reason}`);
  });
  return { heads, reports };
}

/**
 * The head a template serves, of the head on every feature and the prefix's (null: the features past
 * the prefix measurably helped, or there is no prefix): the prefix's, unless only the other is served.
 */
export function pickArm<T extends { gate: { served: boolean } }>(full: T, prefix: T | null): T {
  return prefix && (prefix.gate.served || !full.gate.served) ? prefix : full;
}

/** The serving gate of a template's head on its out-of-fold answers (a head that is the base model: not served). */
function gateOf(
  t: TemplateData,
  head: FittedHead,
  items: Answered,
  options: FitOptions,
): { served: boolean; why: string } {
  if (head.chosen === 'base model') {
    const nll = head.candidates[0]?.nll ?? 0;
    return {
      served: false,
      why: `not served: not better than the base model on ${t.rows.length} training examples (no candidate's cross-validated NLL is below the base model's ${nll.toFixed(4)}), so the base model answers`,
    };
  }
  return servingGate(
    items.map((i) => i.before),
    items.map((i) => i.after),
    hash32(t.template),
    head.chosen,
    options.gate,
  );
}

/** `t` with its states and option features cut to their first `dim` features (FitOptions.prefix). */
export function prefixOf(t: TemplateData, dim: number): TemplateData {
  return {
    ...t,
    rows: t.rows.map((r) => ({ ...r, state: r.state ? r.state.subarray(0, dim) : null })),
    ...(t.labelStates ? { labelStates: t.labelStates.map((e) => (e ? e.subarray(0, dim) : null)) } : {}),
  };
}

/**
 * The second encoder where it measurably helps (issue 39): a template of its own whose served head
 * reads features past `options.prefix` (the embedded engine: MiniLM's, a second encoding when served)
 * is cross-fitted again on the prefix alone, its own candidates in the same folds; the head on every
 * feature is kept only where its out-of-fold answers beat the prefix head's by the serving gate's
 * margin (`use` false), else the prefix head answers and is gated against the base model instead.
 */
function prefixArms(
  fitted: readonly { t: TemplateData; why: string | null; items: Answered }[],
  served: ReadonlyMap<string, FittedHead | null>,
  outer: ReadonlyMap<string, Map<number, number>>,
  minExamples: number,
  outerFolds: number,
  options: FitOptions,
) {
  const arms = new Map<string, { use: boolean; head: FittedHead; items: Answered; why: string }>();
  const cheap = options.prefix;
  if (!cheap) return arms;
  for (const x of fitted) {
    const full = served.get(x.t.template);
    if (x.why || x.t.rows.length < minExamples || !full?.file.weights || full.file.dim <= cheap.dim) continue;
    const t = prefixOf(x.t, cheap.dim);
    const data = toData(t, options.project);
    const items: Answered = [];
    let head: FittedHead | null = null;
    for (let round = 0; round <= outerFolds; round++) {
      const last = round === outerFolds;
      const p = prepare(t, data, last ? null : (outer.get(t.template) ?? null), round, options);
      const fit = fitOnRows(t, ownData(t, data), p.train, p.fold, p.folds, options);
      if (!last) items.push(...answered(t, p.test, fit.file, p.train));
      else {
        // the report lists both fits' candidates: the prefix's that read states named for it
        const alone = (name: string) => `${name} on ${cheap.name} alone`;
        const own = fit.candidates.filter((c) => !full.candidates.some((f) => f.name === c.name && f.nll === c.nll));
        head = {
          file: fit.file,
          candidates: [...full.candidates, ...own.map((c) => ({ name: alone(c.name), nll: c.nll }))],
          chosen: fit.file.weights ? alone(fit.chosen) : fit.chosen,
        };
      }
    }
    if (!head) continue;
    const helps = servingGate(
      items.map((i) => i.after),
      x.items.map((i) => i.after),
      hash32(`${t.template}#prefix`),
      full.chosen,
      options.gate,
    );
    const f = (v: number) => v.toFixed(4);
    const n = items.length;
    const why = helps.served
      ? `it reads every feature: on ${n} held-out examples, better than on ${cheap.name} alone by more than chance (Brier gain ${f(helps.brierGain)}, its lower bound ${f(helps.brierLower)})`
      : `it reads ${cheap.name} alone: on ${n} held-out examples, every feature was not better by more than chance (Brier gain ${f(helps.brierGain)}), and ${cheap.name} alone costs one encoding less when served`;
    arms.set(t.template, { use: !helps.served, head, items, why });
  }
  return arms;
}

/** One template fitted alone (no shared model: it needs two), as fitAdapter fits it. */
export function fitTemplate(t: TemplateData, options: FitOptions = {}) {
  const { heads, reports } = fitAdapter([t], { ...options, shared: false });
  return { head: heads[0] ?? null, report: reports[0] as TemplateReport };
}

/** The stored artifact for served heads. */
export function adapterFile(base: string, features: string | null, heads: HeadFile[]): AdapterFile {
  return { format: ADAPTER_FORMAT, base, features: heads.some((h) => h.kind === 'probe') ? features : null, heads };
}
