/**
 * Calibrating a model Brier did not train (a GGUF file, an upstream server), per question type:
 * run it on a labelled calibration set (the shipped one, models/calibration-set/, or an account's
 * examples), then fit one (T, alpha) per type with fitCalibration (calibration-fit.ts, the fit of
 * brier-lite's own calibration), keeping every source set's Brier at or below the uniform answer's.
 *
 * The guarantee is measured held out: for each type, each source set is answered by a calibration
 * fitted without it (leave one source set out). Where some set would still be worse than uniform,
 * the lowest allowed uniform weight (alpha floor) is raised, in steps of 0.05, until none is; the
 * served calibration is then fitted on every set with that floor. src/engines/calibrated.ts applies
 * the result; `brier models calibrate` (src/cli/calibrate.ts) runs this.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CalibrationMetrics,
  type CalibrationReportRow,
  MODEL_CALIBRATION_FORMAT,
  type ModelCalibrationFile,
  QUESTION_TYPES,
  type QuestionType,
} from '../engines/calibrated.ts';
import { type CalibrationParams, calibrate, UNIFORM } from '../engines/embedded/calibration.ts';
import type { DecisionEngine } from '../engines/engine.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { toDecisionRequest } from '../systemone/normalize.ts';
import type { WireQuestion, WireState } from '../systemone/protocol.ts';
import { fitCalibration } from './calibration-fit.ts';
import { REPO_ROOT, targetIndex } from './data.ts';
import { brierScore, computeMetrics, eceNoiseFloor, oneHot, uniform } from './evaluation.ts';

export const SHIPPED_CALIBRATION_SET = join(REPO_ROOT, 'models', 'calibration-set', 'calibration-set.jsonl');
/** Steps of the alpha floor tried, lowest first (1: the uniform answer, which always qualifies). */
export const ALPHA_FLOORS: readonly number[] = Array.from({ length: 21 }, (_, i) => i / 20);

export interface CalibrationRow {
  id: string;
  /** The source set (what leave-one-set-out holds out). */
  set: string;
  type: QuestionType;
  request: DecisionRequest;
  /** Index of the labelled option. */
  target: number;
}

/** A row with the model's raw probabilities. */
export interface RawAnswer {
  id: string;
  set: string;
  type: QuestionType;
  p: number[];
  target: number;
}

/**
 * Parses calibration-set JSON Lines (`{id, set, state, question, label}`, the question in System One
 * wire form). Throws naming the line on anything malformed.
 */
export function parseCalibrationSet(text: string): CalibrationRow[] {
  const rows: CalibrationRow[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const r = JSON.parse(line) as { id: string; set: string; state: WireState; question: WireQuestion; label: unknown };
    const request = toDecisionRequest(r.state, [r.question]);
    const question = request.questions[0];
    if (!question || !QUESTION_TYPES.includes(question.type)) throw new Error(`line ${i + 1}: no question`);
    const target = targetIndex(question, r.label as never);
    if (!(target >= 0 && target < question.options.length)) throw new Error(`line ${i + 1}: label not an option`);
    rows.push({ id: String(r.id), set: String(r.set), type: question.type, request, target });
  });
  return rows;
}

export function readCalibrationSet(path = SHIPPED_CALIBRATION_SET): { rows: CalibrationRow[]; sha256: string } {
  const text = readFileSync(path, 'utf8');
  return { rows: parseCalibrationSet(text), sha256: createHash('sha256').update(text).digest('hex') };
}

/** The first `perSet` rows of each set (the file is already a seeded sample), optionally only `sets`. */
export function selectRows(rows: readonly CalibrationRow[], perSet?: number, sets?: readonly string[]) {
  const seen = new Map<string, number>();
  return rows.filter((r) => {
    if (sets && !sets.includes(r.set)) return false;
    const n = seen.get(r.set) ?? 0;
    seen.set(r.set, n + 1);
    return perSet === undefined || n < perSet;
  });
}

/** Asks the (raw, uncalibrated) engine every row, one at a time; `cached` answers by id are reused. */
export async function collectRawAnswers(
  engine: DecisionEngine,
  rows: readonly CalibrationRow[],
  options: {
    signal?: AbortSignal;
    cached?: ReadonlyMap<string, number[]>;
    onAnswer?: (a: RawAnswer, done: number) => void;
  } = {},
): Promise<RawAnswer[]> {
  const signal = options.signal ?? new AbortController().signal;
  const out: RawAnswer[] = [];
  for (const row of rows) {
    signal.throwIfAborted();
    const k = row.request.questions[0]?.options.length ?? 0;
    let p = options.cached?.get(row.id);
    if (p === undefined || p.length !== k) p = (await engine.answer(row.request, signal)).probabilities[0] ?? [];
    const answer = { id: row.id, set: row.set, type: row.type, p, target: row.target };
    out.push(answer);
    options.onAnswer?.(answer, out.length);
  }
  return out;
}

const brierOf = (p: number[], target: number) => brierScore(p, oneHot(p.length, target));
const uniformBrier = (k: number) => (1 - 1 / k) / k;
const logits = (p: readonly number[]) => p.map((v) => Math.log(Math.max(1e-12, v)));

function metrics(items: readonly { p: readonly number[]; target: number; type: QuestionType }[]): CalibrationMetrics {
  const m = computeMetrics(
    items.map((it) => ({ p: it.p, t: oneHot(it.p.length, it.target), ordinal: it.type === 'score' })),
  );
  const confidences = items.map((it) => Math.max(...it.p));
  return {
    n: m.n,
    accuracy: m.accuracy,
    brier: m.brier,
    nll: m.nll,
    ece: m.ece,
    ece_floor: eceNoiseFloor(confidences),
  };
}

export interface TypeFit {
  params: CalibrationParams;
  alphaFloor: number;
  /** Each set's rows answered by the calibration fitted without that set (at alphaFloor); null with one set. */
  heldOut: Map<string, number[][]> | null;
}

function fitWith(answers: readonly RawAnswer[], caps: Map<string, number>, minAlpha: number): CalibrationParams {
  if (minAlpha >= 1) return UNIFORM;
  return fitCalibration(
    answers.map((a) => ({ logits: logits(a.p), target: a.target, task: a.set })),
    (set) => caps.get(set) ?? 0,
    brierOf,
    { minAlpha },
  );
}

/** Fits one type's (T, alpha): the lowest alpha floor at which every held-out set is at or below uniform. */
export function fitType(answers: readonly RawAnswer[]): TypeFit {
  const caps = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const a of answers) {
    caps.set(a.set, (caps.get(a.set) ?? 0) + uniformBrier(a.p.length));
    counts.set(a.set, (counts.get(a.set) ?? 0) + 1);
  }
  for (const [set, sum] of caps) caps.set(set, sum / (counts.get(set) ?? 1));
  const sets = [...caps.keys()];
  if (sets.length < 2) return { params: fitWith(answers, caps, 0), alphaFloor: 0, heldOut: null };
  for (const floor of ALPHA_FLOORS) {
    const heldOut = new Map<string, number[][]>();
    let ok = true;
    for (const set of sets) {
      const params = fitWith(
        answers.filter((a) => a.set !== set),
        caps,
        floor,
      );
      const rows = answers.filter((a) => a.set === set);
      const p = rows.map((a) => calibrate(logits(a.p), params));
      heldOut.set(set, p);
      const brier = rows.reduce((s, a, i) => s + brierOf(p[i] ?? [], a.target), 0) / rows.length;
      if (brier > (caps.get(set) ?? 0) + 1e-9) ok = false;
    }
    if (ok) return { params: fitWith(answers, caps, floor), alphaFloor: floor, heldOut };
  }
  throw new Error('unreachable: the uniform answer meets every cap');
}

export interface ModelCalibrationFit {
  types: ModelCalibrationFile['types'];
  report: CalibrationReportRow[];
}

/** Fits every type present in `answers` and reports before/after/held-out per type and per set. */
export function fitModelCalibration(answers: readonly RawAnswer[]): ModelCalibrationFit {
  const types: ModelCalibrationFile['types'] = {};
  const report: CalibrationReportRow[] = [];
  for (const type of QUESTION_TYPES) {
    const rows = answers.filter((a) => a.type === type);
    if (rows.length === 0) continue;
    const fit = fitType(rows);
    types[type] = { temperature: fit.params.temperature, alpha: fit.params.alpha, alpha_floor: fit.alphaFloor };
    const after = rows.map((a) => ({ ...a, p: calibrate(logits(a.p), fit.params) }));
    const heldOutOf = (set: string | null) => {
      if (fit.heldOut === null) return null;
      const items = rows.flatMap((a) => (set === null || a.set === set ? [a] : []));
      const bySet = new Map<string, number>();
      return metrics(
        items.map((a) => {
          const i = bySet.get(a.set) ?? 0;
          bySet.set(a.set, i + 1);
          return { ...a, p: fit.heldOut?.get(a.set)?.[i] ?? uniform(a.p.length) };
        }),
      );
    };
    const row = (set: string | null): CalibrationReportRow => {
      const pick = <T extends { set: string }>(xs: T[]) => xs.filter((a) => set === null || a.set === set);
      const raw = pick(rows);
      return {
        type,
        set,
        n: raw.length,
        uniform_brier: raw.reduce((s, a) => s + uniformBrier(a.p.length), 0) / raw.length,
        before: metrics(raw),
        after: metrics(pick(after)),
        held_out: heldOutOf(set),
      };
    };
    report.push(row(null));
    for (const set of [...new Set(rows.map((a) => a.set))]) report.push(row(set));
  }
  return { types, report };
}

export function calibrationFile(
  key: string,
  name: string,
  data: ModelCalibrationFile['data'],
  fit: ModelCalibrationFit,
  now = new Date(),
): ModelCalibrationFile {
  return {
    format: MODEL_CALIBRATION_FORMAT,
    model: { key, name },
    fitted_at: now.toISOString(),
    data,
    types: fit.types,
    report: fit.report,
  };
}

/** The report as a fixed-width table (the CLI prints it). */
export function formatCalibrationReport(report: readonly CalibrationReportRow[]): string {
  const f = (x: number | undefined) => (x === undefined ? '     -' : x.toFixed(3).padStart(6));
  const lines = [
    `${'type'.padEnd(7)}${'set'.padEnd(18)}${'n'.padStart(4)}  ${'uniform'.padStart(7)}  brier: ${'before'.padStart(6)} ${'after'.padStart(6)} ${'held'.padStart(6)}  acc: ${'before'.padStart(6)} ${'after'.padStart(6)}  nll: ${'before'.padStart(6)} ${'after'.padStart(6)}  ece: ${'before'.padStart(6)} ${'floor'.padStart(6)} ${'after'.padStart(6)} ${'floor'.padStart(6)}`,
  ];
  for (const r of report) {
    const worse = (r.held_out ?? r.after).brier > r.uniform_brier + 1e-9 ? '  WORSE THAN UNIFORM' : '';
    lines.push(
      `${r.type.padEnd(7)}${(r.set ?? '(all)').padEnd(18)}${String(r.n).padStart(4)}  ${f(r.uniform_brier).padStart(7)}         ${f(r.before.brier)} ${f(r.after.brier)} ${f(r.held_out?.brier)}       ${f(r.before.accuracy)} ${f(r.after.accuracy)}       ${f(r.before.nll)} ${f(r.after.nll)}       ${f(r.before.ece)} ${f(r.before.ece_floor)} ${f(r.after.ece)} ${f(r.after.ece_floor)}${worse}`,
    );
  }
  return lines.join('\n');
}
