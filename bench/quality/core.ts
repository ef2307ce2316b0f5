/**
 * The quality bench's core: answers labelled rows through any `answer(state, questions)`
 * callback (the engine directly, or HTTP `/v1/systemone`) and scores them per dataset and per
 * question type, beside the majority-prior and uniform baselines. Tasks used to train the engine
 * (if it says which) are scored on their held-out rows only and reported separately.
 */
import {
  baselineMetrics,
  computeMetrics,
  type MetricItem,
  type Metrics,
  oneHot,
} from '../../src/training/evaluation.ts';

export interface BenchQuestion {
  type: 'noul' | 'choice' | 'score';
  instructions: string | null;
  /** As in the data files: null / {label: description|null} / [level texts lowest first]. */
  criteria: null | Record<string, string | null> | string[];
}

/**
 * Answers one request; returns one probability vector per question, in option order
 * (noul: [false, true]; choice: the criteria keys in order; score: levels lowest first).
 */
export type AnswerFn = (state: string, questions: BenchQuestion[]) => Promise<number[][]>;

export interface BenchRow {
  id: string;
  dataset: string;
  state: string;
  question: BenchQuestion;
  /** Index of the labelled option. */
  target: number;
}

export interface Scores {
  model: Metrics;
  majorityPrior: Metrics;
  uniform: Metrics;
}

export interface QualityReport {
  engine: string;
  generatedAt: string;
  rows: number;
  trainedDatasets: string[];
  datasets: Record<string, Scores & { type: string; group: 'trained (held-out rows)' | 'held-out task' }>;
  groups: Record<'trained (held-out rows)' | 'held-out task', Record<string, Scores>>;
  failures: number;
  seconds: number;
}

export function optionCount(q: BenchQuestion): number {
  if (q.type === 'noul') return 2;
  if (Array.isArray(q.criteria)) return q.criteria.length;
  return q.criteria ? Object.keys(q.criteria).length : 0;
}

export async function runQualityBench(options: {
  engine: string;
  rows: BenchRow[];
  answer: AnswerFn;
  trainedDatasets?: readonly string[];
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}): Promise<QualityReport> {
  const started = Date.now();
  const trained = new Set(options.trainedDatasets ?? []);
  const results: ({ p: number[]; row: BenchRow } | null)[] = new Array(options.rows.length).fill(null);
  let next = 0;
  let done = 0;
  let failures = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      const row = options.rows[i];
      if (!row) return;
      try {
        const [p] = await options.answer(row.state, [row.question]);
        if (!p || p.length !== optionCount(row.question)) throw new Error('bad answer shape');
        results[i] = { p, row };
      } catch {
        failures++;
      }
      done++;
      options.onProgress?.(done, options.rows.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 2) }, () => worker()));

  const ok = results.filter((r): r is { p: number[]; row: BenchRow } => r !== null);
  const groupOf = (d: string): 'trained (held-out rows)' | 'held-out task' =>
    trained.has(d) ? 'trained (held-out rows)' : 'held-out task';
  const score = (items: { p: number[]; row: BenchRow }[]): Scores => {
    const metricItems: MetricItem[] = items.map(({ p, row }) => ({
      p,
      t: oneHot(p.length, row.target),
      ordinal: row.question.type === 'score',
    }));
    const byDataset = new Map<string, number[][]>();
    for (const { p, row } of items) {
      const list = byDataset.get(row.dataset) ?? [];
      list.push(oneHot(p.length, row.target));
      byDataset.set(row.dataset, list);
    }
    const base = baselineMetrics(
      [...byDataset.entries()].map(([d, targets]) => ({
        targets,
        ordinal: items.find((x) => x.row.dataset === d)?.row.question.type === 'score',
      })),
    );
    return { model: computeMetrics(metricItems), majorityPrior: base.prior, uniform: base.uniform };
  };
  const datasets: QualityReport['datasets'] = {};
  for (const d of [...new Set(ok.map((r) => r.row.dataset))].sort()) {
    const items = ok.filter((r) => r.row.dataset === d);
    datasets[d] = { ...score(items), type: items[0]?.row.question.type ?? '?', group: groupOf(d) };
  }
  const groups = {} as QualityReport['groups'];
  for (const g of ['trained (held-out rows)', 'held-out task'] as const) {
    groups[g] = {};
    for (const t of ['noul', 'choice', 'score', 'all'] as const) {
      const items = ok.filter((r) => groupOf(r.row.dataset) === g && (t === 'all' || r.row.question.type === t));
      if (items.length) groups[g][t] = score(items);
    }
  }
  return {
    engine: options.engine,
    generatedAt: new Date().toISOString(),
    rows: ok.length,
    trainedDatasets: [...trained].sort(),
    datasets,
    groups,
    failures,
    seconds: (Date.now() - started) / 1000,
  };
}

function f(x: number | null, d = 3): string {
  return x === null ? '    -' : x.toFixed(d);
}

/** A plain-text table of a report. */
export function formatReport(r: QualityReport): string {
  const head =
    'name                       type     n    acc  prior    Brier  prior  unif     NLL  prior   unif    ECE    MAE  prior   unif';
  const line = (name: string, type: string, s: Scores): string =>
    [
      name.padEnd(26),
      type.padEnd(6),
      String(s.model.n).padStart(5),
      f(s.model.accuracy).padStart(6),
      f(s.majorityPrior.accuracy).padStart(6),
      f(s.model.brier, 4).padStart(8),
      f(s.majorityPrior.brier, 4).padStart(6),
      f(s.uniform.brier, 4).padStart(6),
      f(s.model.nll).padStart(7),
      f(s.majorityPrior.nll).padStart(6),
      f(s.uniform.nll).padStart(6),
      f(s.model.ece).padStart(6),
      f(s.model.scoreMae, 2).padStart(6),
      f(s.majorityPrior.scoreMae, 2).padStart(6),
      f(s.uniform.scoreMae, 2).padStart(6),
    ].join(' ');
  const out: string[] = [`quality: ${r.engine}  (${r.rows} rows, ${r.failures} failures, ${r.seconds.toFixed(0)} s)`];
  for (const g of ['trained (held-out rows)', 'held-out task'] as const) {
    const ds = Object.entries(r.datasets).filter(([, s]) => s.group === g);
    if (ds.length === 0) continue;
    out.push('', `== ${g}`, head);
    for (const [name, s] of ds) out.push(line(name, s.type, s));
    for (const [t, s] of Object.entries(r.groups[g] ?? {})) out.push(line(`  [${t}]`, t, s));
  }
  return out.join('\n');
}
