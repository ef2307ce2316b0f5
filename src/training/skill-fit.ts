/**
 * Stage S of `npm run train` (issue 38): brier-lite 4.1's skill model (src/engines/embedded/skill.ts),
 * fitted and measured holding out whole source sets.
 *
 * Every labelled row of every set, every question generated from their labels and every CalDec decision
 * of the measured half arrives here with its held-out answer before the skill model (maps, pools,
 * head and calibration fitted without its set: train.ts) and the frame embedding of its question. A unit
 * is a set's kind of question (its own questions, or one kind of generated question) or a CalDec site;
 * its skill s* is the share of the answers' departure from uniform that minimizes its Brier score.
 *
 * A question's skill is a weighted quantile of the other units' s*, weighted by frame similarity (same
 * type), beside a prior weight at 0 (skill.ts). The kernel's sharpness, the prior and the quantile are
 * chosen from small grids by
 * leave-set-out on the units the fit may see: for the shipped model every set, for the measurement of a
 * held-out set S every set but S and its twins (nested: S's own answers never choose anything that
 * answers S). The floor below which a question abstains is fixed in advance (SKILL_FLOOR), not chosen.
 */
import { dot, type QuestionType } from '../engines/embedded/features.ts';
import type { SkillModel, SkillUnit } from '../engines/embedded/skill.ts';

/** Below this skill a question gets the uniform answer (x_abstained). Fixed before measuring. */
export const SKILL_FLOOR = 0.1;
/** A unit's weight: its rows, counted up to this many. */
export const UNIT_ROWS_CAP = 300;
/** Grids of the kernel's sharpness and the prior weight of "no skill". */
export const SHARPNESS_GRID = [5, 10, 20, 40, 80, 160] as const;
export const PRIOR_GRID = [0.02, 0.05, 0.1, 0.2, 0.5, 1] as const;
export const QUANTILE_GRID = [0.1, 0.2, 0.3, 0.5] as const;
/** A set's excess over the uniform answer's Brier weighs this much more than a gain in the choice of parameters. */
const EXCESS_PENALTY = 10;

/** Sets that share texts (../shared/data/SOURCES.md, "Overlaps"): held out together. */
export const TWINS: readonly (readonly string[])[] = [
  ['sst2', 'sst5'],
  ['sick_nli', 'sick_relatedness'],
  ['airline_sentiment', 'airline_complaint'],
];

/** The sets held out with `set` (itself and its twins). */
export function heldOutWith(set: string): readonly string[] {
  return TWINS.find((t) => t.includes(set)) ?? [set];
}

/** One question on one state with its held-out answer before the skill model. */
export interface SkillItem {
  /** The unit: `<set>/<kind>` or `caldec/<site>`. */
  unit: string;
  /** What is held out with it: a set's name, or `caldec:<site>`. */
  set: string;
  type: QuestionType;
  /** The question's frame (texts.ts `frame`) and its embedding (null: no words, skill 0). */
  frameText: string;
  frame: Float32Array | null;
  /** The family its question reads as (reading.ts), reported. */
  family: string;
  p: number[];
  /** The target distribution (one-hot for a labelled row). */
  t: number[];
  /**
   * The weight its answer put on the nearest training task's (familiarity, model.ts): serving keeps at
   * least that share of the answer whatever the skill, so the evaluation does too. Absent: 0.
   */
  seen?: number;
}

/** Items with one frame in one unit: the Brier of s p + (1 - s) u over them is A s^2 - 2 B s + C. */
interface Group {
  unit: number;
  set: string;
  type: QuestionType;
  frame: Float32Array | null;
  n: number;
  a: number;
  b: number;
  c: number;
}

interface UnitStats {
  name: string;
  set: string;
  type: QuestionType;
  centroid: Float32Array | null;
  n: number;
  a: number;
  b: number;
}

/** The quadratic coefficients of one item's Brier (CalDec convention: divided by k) in s. */
function coefficients(p: readonly number[], t: readonly number[]): { a: number; b: number; c: number } {
  const k = p.length;
  let a = 0;
  let b = 0;
  let c = 0;
  for (let i = 0; i < k; i++) {
    const d = (p[i] ?? 0) - 1 / k;
    const e = (t[i] ?? 0) - 1 / k;
    a += d * d;
    b += d * e;
    c += e * e;
  }
  return { a: a / k, b: b / k, c: c / k };
}

/** s* of a unit: the Brier-optimal share, in [0, 1]. */
export function optimalSkill(a: number, b: number): number {
  return a > 0 ? Math.min(1, Math.max(0, b / a)) : 0;
}

function normalize(v: Float64Array): Float32Array | null {
  let n = 0;
  for (const x of v) n += x * x;
  if (n === 0) return null;
  const r = 1 / Math.sqrt(n);
  return Float32Array.from(v, (x) => x * r);
}

/** Units and frame groups of the items. */
function summarize(items: readonly SkillItem[]): { units: UnitStats[]; groups: Group[]; groupOf: number[] } {
  const unitIndex = new Map<string, number>();
  const units: UnitStats[] = [];
  const sums: Float64Array[] = [];
  const groupIndex = new Map<string, number>();
  const groups: Group[] = [];
  const groupOf: number[] = [];
  for (const it of items) {
    let u = unitIndex.get(it.unit);
    if (u === undefined) {
      u = units.length;
      unitIndex.set(it.unit, u);
      units.push({ name: it.unit, set: it.set, type: it.type, centroid: null, n: 0, a: 0, b: 0 });
      sums.push(new Float64Array(it.frame?.length ?? 0));
    }
    const q = coefficients(it.p, it.t);
    const unit = units[u] as UnitStats;
    unit.n++;
    unit.a += q.a;
    unit.b += q.b;
    const sum = sums[u] as Float64Array;
    if (it.frame) {
      if (sum.length === 0) sums[u] = new Float64Array(it.frame.length);
      const s = sums[u] as Float64Array;
      for (let i = 0; i < it.frame.length; i++) s[i] = (s[i] ?? 0) + (it.frame[i] ?? 0);
    }
    const key = `${u}\u0000${it.frameText}`;
    let g = groupIndex.get(key);
    if (g === undefined) {
      g = groups.length;
      groupIndex.set(key, g);
      groups.push({ unit: u, set: it.set, type: it.type, frame: it.frame, n: 0, a: 0, b: 0, c: 0 });
    }
    const group = groups[g] as Group;
    group.n++;
    group.a += q.a;
    group.b += q.b;
    group.c += q.c;
    groupOf.push(g);
  }
  units.forEach((u, i) => {
    u.centroid = normalize(sums[i] as Float64Array);
  });
  return { units, groups, groupOf };
}

export interface SkillParams {
  sharpness: number;
  prior: number;
  quantile: number;
}

/**
 * Every group's kernel weight on every unit, per sharpness, and the units in ascending order of s*: a
 * held-out skill is a weighted quantile over the units not left out, in one pass.
 */
interface Kernel {
  units: readonly UnitStats[];
  groups: readonly Group[];
  /** Per sharpness (SHARPNESS_GRID order): group x unit weights (0 across types). */
  weights: Float64Array[];
  /** Unit indices by ascending s*. */
  order: number[];
  skills: Float64Array;
}

function unitWeight(u: UnitStats): number {
  return Math.min(u.n, UNIT_ROWS_CAP) / UNIT_ROWS_CAP;
}

function kernel(units: readonly UnitStats[], groups: readonly Group[]): Kernel {
  const U = units.length;
  const weights = SHARPNESS_GRID.map((sharpness) => {
    const w = new Float64Array(groups.length * U);
    groups.forEach((g, gi) => {
      if (!g.frame) return;
      units.forEach((u, ui) => {
        if (u.type !== g.type || !u.centroid) return;
        w[gi * U + ui] = unitWeight(u) * Math.exp(sharpness * (dot(g.frame as Float32Array, u.centroid) - 1));
      });
    });
    return w;
  });
  const skills = Float64Array.from(units, (u) => optimalSkill(u.a, u.b));
  const order = units.map((_, i) => i).sort((a, b) => (skills[a] ?? 0) - (skills[b] ?? 0));
  return { units, groups, weights, order, skills };
}

/** The skill of group `gi` with the units of `excluded` sets left out (skill.ts `skillOf`, held out). */
function groupSkillOf(kn: Kernel, gi: number, excluded: ReadonlySet<string>, params: SkillParams): number {
  const g = kn.groups[gi] as Group;
  if (!g.frame) return 0;
  const si = SHARPNESS_GRID.indexOf(params.sharpness as (typeof SHARPNESS_GRID)[number]);
  const w = kn.weights[si] as Float64Array;
  const U = kn.units.length;
  let total = params.prior;
  for (const ui of kn.order) if (!excluded.has((kn.units[ui] as UnitStats).set)) total += w[gi * U + ui] ?? 0;
  const target = params.quantile * total - 1e-12;
  let sum = params.prior;
  if (sum >= target) return 0;
  for (const ui of kn.order) {
    if (excluded.has((kn.units[ui] as UnitStats).set)) continue;
    sum += w[gi * U + ui] ?? 0;
    if (sum >= target) return kn.skills[ui] ?? 0;
  }
  return kn.skills[kn.order.at(-1) ?? 0] ?? 0;
}

/** A set's Brier and the uniform answer's, from its groups at given skills (the floor applied). */
function setBrier(
  groups: readonly Group[],
  members: readonly number[],
  skillOf: (gi: number) => number,
): { model: number; uniform: number } {
  let model = 0;
  let uniform = 0;
  let n = 0;
  for (const gi of members) {
    const g = groups[gi] as Group;
    const raw = skillOf(gi);
    const s = raw < SKILL_FLOOR ? 0 : raw;
    model += s * s * g.a - 2 * s * g.b + g.c;
    uniform += g.c;
    n += g.n;
  }
  return { model: model / Math.max(1, n), uniform: uniform / Math.max(1, n) };
}

function loss(b: { model: number; uniform: number }): number {
  if (b.uniform <= 0) return 0;
  const ratio = b.model / b.uniform;
  return ratio + EXCESS_PENALTY * Math.max(0, ratio - 1);
}

export interface SkillFit {
  model: SkillModel;
  /** Per item: its skill as held out (its set and twins left out of units and parameter choice). */
  heldOutSkill: number[];
  /** Per held-out set: the parameters chosen without it. */
  chosen: Record<string, SkillParams>;
  /** Per unit: rows and s* (every set). */
  units: { name: string; type: QuestionType; n: number; skill: number }[];
}

/**
 * Fits the skill model on every item and measures every set held out (nested leave-set-out).
 * `log` reports progress.
 */
export function fitSkill(items: readonly SkillItem[], log: (m: string) => void = () => {}): SkillFit {
  const { units, groups, groupOf } = summarize(items);
  const kn = kernel(units, groups);
  const sets = [...new Set(units.map((u) => u.set))].sort();
  const membersOf = new Map<string, number[]>();
  groups.forEach((g, gi) => {
    const list = membersOf.get(g.set);
    if (list) list.push(gi);
    else membersOf.set(g.set, [gi]);
  });
  const grid: SkillParams[] = SHARPNESS_GRID.flatMap((sharpness) =>
    PRIOR_GRID.flatMap((prior) => QUANTILE_GRID.map((quantile) => ({ sharpness, prior, quantile }))),
  );
  const closure = (names: readonly string[]) => new Set(names.flatMap(heldOutWith));

  /** The parameters with the lowest leave-set-out loss over `among`, units of `excluded` never used. */
  const choose = (among: readonly string[], excluded: readonly string[]): SkillParams => {
    let best = grid[0] as SkillParams;
    let bestLoss = Number.POSITIVE_INFINITY;
    for (const params of grid) {
      let total = 0;
      for (const t of among) {
        const out = closure([...excluded, t]);
        total += loss(setBrier(groups, membersOf.get(t) ?? [], (gi) => groupSkillOf(kn, gi, out, params)));
      }
      if (total < bestLoss - 1e-12) {
        bestLoss = total;
        best = params;
      }
    }
    return best;
  };

  const chosen: Record<string, SkillParams> = {};
  const groupSkill = new Float64Array(groups.length);
  for (const s of sets) {
    const out = closure([s]);
    const params = choose(
      sets.filter((t) => !out.has(t)),
      [s],
    );
    chosen[s] = params;
    for (const gi of membersOf.get(s) ?? []) groupSkill[gi] = groupSkillOf(kn, gi, out, params);
    log(`stage S: ${s} held out: sharpness ${params.sharpness}, prior ${params.prior}, quantile ${params.quantile}`);
  }
  const shipped = choose(sets, []);
  const model: SkillModel = {
    ...shipped,
    floor: SKILL_FLOOR,
    units: units.flatMap((u): SkillUnit[] =>
      u.centroid
        ? [
            {
              name: u.name,
              type: u.type,
              centroid: u.centroid,
              skill: optimalSkill(u.a, u.b),
              weight: unitWeight(u),
            },
          ]
        : [],
    ),
  };
  log(
    `stage S: shipped sharpness ${shipped.sharpness}, prior ${shipped.prior}, quantile ${shipped.quantile}, ${model.units.length} units`,
  );
  return {
    model,
    heldOutSkill: groupOf.map((g) => groupSkill[g] ?? 0),
    chosen,
    units: units.map((u) => ({ name: u.name, type: u.type, n: u.n, skill: optimalSkill(u.a, u.b) })),
  };
}
