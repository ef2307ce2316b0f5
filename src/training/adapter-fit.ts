/**
 * Fitting adapters (issues 23 and 39): per question template, from an account's labelled examples with
 * the base model's answers (and, on the embedded engine, its state embeddings), a head that
 * src/engines/adapters/adapter.ts serves: a correction of the base model's answer. Each template's
 * examples are split, stratified by label and seeded by the template id: a held-out part (25%) is only
 * measured, before (the base model) and after (the adapter), and the adapter is served only where a
 * paired bootstrap says it is better there (adapter-select.ts servingGate); otherwise the base model
 * answers and the report says why.
 *
 * Candidates, chosen by cross-validated NLL on the training part only (adapter-select.ts):
 * - the base model itself (chosen: not served) and calibration (adapter-calibration.ts);
 * - probes on the state embedding, with and without a label prior (adapter-probe.ts);
 * - shrinkage LDA stacked on the base model (adapter-lda.ts, from 100 training rows);
 * - the account's shared model over all its templates (adapter-shared.ts, from 2 templates), which is
 *   also the only candidate of a template with fewer examples than a template of its own needs.
 * The chosen candidate is refit on the whole training part; what is measured is what is served.
 */
import {
  ADAPTER_FORMAT,
  type AdapterFile,
  applyHead,
  type HeadFile,
  parseAdapter,
} from '../engines/adapters/adapter.ts';
import { hash32 } from '../lib/seeded.ts';
import {
  type Candidate,
  type Data,
  type TemplateData,
  type TemplateRow,
  toData,
  withoutLabels,
} from './adapter-data.ts';
import { fitDistilledTemplate } from './adapter-distill.ts';
import { headFile } from './adapter-linear.ts';
import { bins, emptyReport, measured, type TemplateReport } from './adapter-report.ts';
import { type FitOptions, type FittedHead, fitOnRows, servingGate, splitRows } from './adapter-select.ts';
import { fitSharedModel, type SharedInput, type SharedModel } from './adapter-shared.ts';
import { asServed, computeMetrics, type MetricItem, majorityPrior, oneHot } from './evaluation.ts';

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
 * The rows a template's own candidates fit: a yes/no or score template's option features are read by
 * the shared model only (as a label prior of its own probe they did not help: yes/no unchanged, score
 * worse, sst5 0.289 -> 0.268 at 200 labels, bench:adapt).
 */
function ownData(t: TemplateData, data: Data): Data {
  return t.type === 'choice' ? data : withoutLabels(data);
}

/** A template's rows, their held-out part and training folds (seeded by the template id). */
interface Prepared {
  data: Data;
  test: number[];
  train: number[];
  fold: Map<number, number>;
  folds: number;
}

function prepare(t: TemplateData, options: FitOptions): Prepared {
  const data = toData(t, options.project);
  const folds = Math.max(
    2,
    Math.min(options.maxFolds ?? 5, Math.floor((t.rows.length * (1 - (options.holdout ?? 0.25))) / 8)),
  );
  const { test, train, fold } = splitRows(Array.from(data.y), options.holdout ?? 0.25, folds, hash32(t.template));
  return { data, test, train, fold, folds };
}

/**
 * A head fitted on every row of `t` (no hold-out: the caller measures it on rows of its own), for
 * benchmarks' learning curves. Null when there are fewer than 2 classes (hard labels only).
 */
export function fitAllRows(t: TemplateData, options: FitOptions = {}): FittedHead | null {
  // Hard labels need two classes; a teacher's distributions (targets) are fitted whatever their argmax.
  if (new Set(t.rows.map((r) => r.label)).size < 2 && !t.rows.some((r) => r.target)) return null;
  const data = ownData(t, toData(t, options.project));
  const ys = Array.from(data.y);
  const folds = Math.max(2, Math.min(options.maxFolds ?? 5, Math.floor(t.rows.length / 8)));
  const { train, fold } = splitRows(ys, 0, folds, hash32(t.template));
  return fitOnRows(t, data, train, fold, folds, options);
}

/** The held-out rows answered by the base model and by `file`, as served (rounded to 0.01). */
function heldOut(t: TemplateData, p: Prepared, file: HeadFile) {
  const head = parseAdapter({ format: ADAPTER_FORMAT, base: '', features: null, heads: [file] }).heads.get(t.template);
  if (!head) throw new Error('adapter: the fitted head did not parse');
  const ordinal = t.type === 'score';
  const k = t.labels.length;
  const before: MetricItem[] = [];
  const after: MetricItem[] = [];
  for (const i of p.test) {
    const row = t.rows[i] as TemplateRow;
    const target = oneHot(k, row.label);
    before.push({ p: asServed(row.base), t: target, ordinal });
    after.push({ p: asServed(applyHead(head, row.base, row.state)), t: target, ordinal });
  }
  return { before, after };
}

/** The report's held-out measures of `file` on `t` (its served flag and reason are the caller's). */
function measure(t: TemplateData, p: Prepared, file: HeadFile, report: TemplateReport) {
  const items = heldOut(t, p, file);
  const k = t.labels.length;
  const prior = majorityPrior(p.train.map((i) => oneHot(k, t.rows[i]?.label ?? 0)));
  report.nTrain = p.train.length;
  report.nTest = p.test.length;
  report.kind = file.kind;
  report.before = measured(items.before);
  report.after = measured(items.after);
  report.prior = computeMetrics(items.before.map((it) => ({ ...it, p: prior })));
  report.reliability = { before: bins(items.before), after: bins(items.after) };
  return items;
}

/** Fits one template (see the file comment); `shared`, the account's shared model, is one candidate. */
export function fitTemplate(
  t: TemplateData,
  options: FitOptions = {},
  progress?: (message: string) => void,
  shared?: SharedModel | null,
) {
  const started = performance.now();
  const minExamples = options.minExamples ?? 20;
  const { report, done } = emptyReport(t, started);
  const classes = new Set(t.rows.map((r) => r.label)).size;
  if (t.rows.length < minExamples || classes < 2) {
    report.reason =
      t.rows.length < minExamples
        ? `not fitted: ${t.rows.length} labelled examples, at least ${minExamples} are needed`
        : 'not fitted: every example has the same label, so there is nothing to hold out against';
    return done(null);
  }
  const p = prepare(t, options);
  const extra = [shared?.candidate(t.template)].filter((c): c is Candidate => !!c);
  const fitted = fitOnRows(t, ownData(t, p.data), p.train, p.fold, p.folds, options, progress, extra);
  report.candidates.push(...fitted.candidates);
  report.chosen = fitted.chosen;
  const items = measure(t, p, fitted.file, report);
  if (fitted.chosen === 'base model') {
    report.served = false;
    const nll = fitted.candidates[0]?.nll ?? 0;
    report.reason = `not served: not better than the base model on ${p.train.length} training examples (no candidate's cross-validated NLL is below the base model's ${nll.toFixed(4)}), so the base model answers`;
    return done(null);
  }
  const gate = servingGate(items.before, items.after, hash32(t.template), fitted.chosen, options.gate);
  report.served = gate.served;
  report.reason = gate.why;
  return done(gate.served ? fitted.file : null);
}

/**
 * Templates with SHARED_MIN_EXAMPLES to minExamples examples, through the shared model only: its
 * head for each, measured on each one's held-out rows, served for all of them or none by the gate on
 * their held-out rows pooled (2 held-out rows a template are no evidence on their own).
 */
function fitSmallTemplates(
  small: readonly { t: TemplateData; p: Prepared }[],
  shared: SharedModel | null,
  minExamples: number,
  options: FitOptions,
) {
  const out = small.map(({ t }) => emptyReport(t, performance.now()));
  const fitted = small.map(({ t, p }, s) => {
    const c = shared?.candidate(t.template);
    if (!c?.refit) return null;
    const file = headFile(t, c.data, c.refit(), true, c.temperature);
    const report = out[s]?.report as TemplateReport;
    report.candidates.push({ name: c.name, nll: c.nll });
    report.chosen = c.name;
    return { file, items: measure(t, p, file, report) };
  });
  const before = fitted.flatMap((f) => f?.items.before ?? []);
  const after = fitted.flatMap((f) => f?.items.after ?? []);
  // the gate reads the held-out examples of every such template together (this one's among them)
  const what = `shared model, gated over the held-out examples of the ${small.length} templates with under ${minExamples} examples`;
  const gate =
    before.length > 0
      ? servingGate(before, after, hash32(small.map((x) => x.t.template).join()), what, options.gate)
      : null;
  return small.map(({ t }, s) => {
    const { report, done } = out[s] as ReturnType<typeof emptyReport>;
    const f = fitted[s];
    if (!f || !gate) {
      report.reason = `not fitted: ${t.rows.length} labelled examples, at least ${minExamples} are needed (or a shared model over 2 templates with state features)`;
      return done(null);
    }
    report.served = gate.served;
    report.reason = `${gate.why} (${t.rows.length} examples here, under the ${minExamples} a template's own adapter needs)`;
    return done(gate.served ? f.file : null);
  });
}

/**
 * Fits every template; the heads returned are the served ones. `only` (a fitting child's share of the
 * job, src/jobs/fitter.ts): the templates fitted and reported; the shared model reads them all.
 */
export function fitAdapter(
  templates: readonly TemplateData[],
  options: FitOptions & { only?: readonly string[] | undefined } = {},
): FitResult {
  const heads: HeadFile[] = [];
  const reports: TemplateReport[] = [];
  const minExamples = options.minExamples ?? 20;
  const only = options.only ? new Set(options.only) : null;
  const mine = only ? templates.filter((t) => only.has(t.template)) : templates;
  let shared: SharedModel | null = null;
  const small: { t: TemplateData; p: Prepared }[] = [];
  if (!options.distill && options.shared !== false) {
    const eligible = templates.filter(
      (t) => t.rows.length >= SHARED_MIN_EXAMPLES && new Set(t.rows.map((r) => r.label)).size >= 2,
    );
    const prepared = eligible.map((t) => ({ t, p: prepare(t, options) }));
    if (prepared.length >= 2) {
      const inputs: SharedInput[] = prepared.map(({ t, p }) => ({ template: t, ...p }));
      shared = fitSharedModel(inputs, {
        maxIterations: options.maxIterations,
        progress: (m) => options.onProgress?.(0, m),
      });
    }
    // all of the job's small templates, whatever this child's share: their gate pools them all
    for (const x of prepared) if (x.t.rows.length < minExamples) small.push(x);
  }
  const smallResults = new Map(
    fitSmallTemplates(small, shared, minExamples, options).map((r, s) => [small[s]?.t.template ?? '', r]),
  );
  mine.forEach((t, index) => {
    const progress = (message: string) => options.onProgress?.(index / mine.length, `${t.template}: ${message}`);
    const { head, report } = options.distill
      ? fitDistilledTemplate(t, { ...options, distill: options.distill }, progress)
      : (smallResults.get(t.template) ?? fitTemplate(t, options, progress, shared));
    if (head) heads.push(head);
    reports.push(report);
    options.onProgress?.((index + 1) / mine.length, `${t.template}: ${report.reason}`);
  });
  return { heads, reports };
}

/** The stored artifact for served heads. */
export function adapterFile(base: string, features: string | null, heads: HeadFile[]): AdapterFile {
  return { format: ADAPTER_FORMAT, base, features: heads.some((h) => h.kind === 'probe') ? features : null, heads };
}
