/**
 * brier-lite's zero-shot answers by question family (issue 31; reading.ts reads the family from the
 * question's words). Each family is answered by the signal measured to carry information for it, through
 * a few parameters fitted leave-source-out by src/training/families.ts:
 *
 * - topic and spam (yes/no): the state's cosine with the question, standardized against that question's
 *   own baseline over a reference pool of states (mean mu_q = q . m, spread sd_q = sqrt(q' C q) from the
 *   pool's mean m and covariance C, kept as its leading eigenvectors plus an isotropic rest), in both
 *   encoders: "Is this about sports?" is informative where a state is closer to it than states usually are.
 * - topic (choice): the same standardized cosine per option, softmaxed.
 * - polarity (yes/no): the state's place on the polarity axis (features.ts polarityOf), read through
 *   s(z) = c tanh(z / c) and signed by the side the question asks for.
 * - pair (yes/no): the cosine of the two parts of the state, in both encoders.
 *
 * Every answer is p = (1 - alpha) sigmoid(w . x + b) + alpha / 2 (choice: softmax), alpha fitted so that
 * no held-out source set is answered worse than uniform. A family without a map abstains (uniform).
 */
import type { QuestionFamily } from './reading.ts';

/** A reference pool's statistics in one encoder's space: mean, leading eigenvectors, the rest isotropic. */
export interface ReferencePool {
  dim: number;
  mean: Float32Array;
  /** rank x dim, row-major, orthonormal rows. */
  basis: Float32Array;
  /** The pool's variance along each basis row. */
  variances: Float32Array;
  /** The pool's mean variance in every direction orthogonal to the basis. */
  residual: number;
}

/** The pool's mean and spread of the cosine between its states and a unit vector q. */
export function baseline(pool: ReferencePool, q: ArrayLike<number>): { mu: number; sd: number } {
  const d = pool.dim;
  let mu = 0;
  let qq = 0;
  for (let i = 0; i < d; i++) {
    const v = q[i] ?? 0;
    mu += v * (pool.mean[i] ?? 0);
    qq += v * v;
  }
  let explained = 0;
  let inBasis = 0;
  const rank = pool.variances.length;
  for (let r = 0; r < rank; r++) {
    let proj = 0;
    const row = r * d;
    for (let i = 0; i < d; i++) proj += (pool.basis[row + i] ?? 0) * (q[i] ?? 0);
    explained += (pool.variances[r] ?? 0) * proj * proj;
    inBasis += proj * proj;
  }
  const variance = explained + pool.residual * Math.max(0, qq - inBasis);
  return { mu, sd: Math.sqrt(Math.max(variance, 1e-12)) };
}

/**
 * Both encoders' pools; `baselineOf` may remember baselines (training computes them for the same
 * question vectors many times), serving computes them as they come.
 */
export interface PoolContext {
  minilm: ReferencePool;
  use: ReferencePool;
  baselineOf?: (pool: ReferencePool, q: Float32Array) => { mu: number; sd: number };
}

/** The state's cosine with q in units of the pool's spread for q. */
export function standardized(p: PoolContext, pool: ReferencePool, state: ArrayLike<number>, q: Float32Array): number {
  const { mu, sd } = (p.baselineOf ?? baseline)(pool, q);
  let c = 0;
  for (let i = 0; i < pool.dim; i++) c += (state[i] ?? 0) * (q[i] ?? 0);
  return (c - mu) / sd;
}

/** A fitted map: weights over the family's signals, a bias (yes/no only) and the mix with uniform. */
export interface FamilyMap {
  weights: number[];
  bias: number;
  alpha: number;
}

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** P(no), P(yes) of a yes/no family map on its signals. */
export function noulAnswer(map: FamilyMap, signals: readonly number[]): number[] {
  let x = map.bias;
  map.weights.forEach((w, i) => {
    x += w * (signals[i] ?? 0);
  });
  const yes = (1 - map.alpha) * sigmoid(x) + map.alpha / 2;
  return [1 - yes, yes];
}

/** A choice map on per-option signals (k rows of CHOICE_SIGNALS). */
export function choiceAnswer(map: FamilyMap, signals: readonly (readonly number[])[]): number[] {
  const logits = signals.map((row) => map.weights.reduce((a, w, i) => a + w * (row[i] ?? 0), 0));
  const top = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - top));
  const sum = e.reduce((a, b) => a + b, 0);
  const k = logits.length;
  return e.map((v) => (1 - map.alpha) * (v / sum) + map.alpha / k);
}

/** A map over named signals (SIGNALS below), as zeroshot.json stores it. */
export interface SignalMap extends FamilyMap {
  signals: string[];
}

/** The zero-shot part of a brier-lite model (zeroshot.json, artifacts.ts `ZeroShotFile`). */
export interface ZeroShotModel {
  pools: PoolContext;
  /** Yes/no maps: `content` answers topic and spam questions, `polarity` and `pair` their families. */
  noul: { content: SignalMap | null; polarity: SignalMap | null; pair: SignalMap | null };
  /** Choice over topics, intents or sides (reading.ts families topic and polarity). */
  choice: SignalMap | null;
  /** The state's polarity place is read through s(z) = c tanh(z / c) with this c. */
  saturation: number;
}

/** What the zero-shot answer of one question reads (built by features.ts `buildInput`). */
export interface ZeroShotInput {
  family: QuestionFamily;
  /** noul polarity: the side asked for; choice: each option's side. */
  direction: number;
  emotion: boolean;
  optionSides: readonly number[] | null;
  residual: readonly boolean[] | null;
  stateMini: Float32Array | null;
  stateUse: Float32Array;
  /** noul: the plain wording's `true` text; null when not embedded. */
  questionMini: Float32Array | null;
  questionUse: Float32Array | null;
  /** choice: each option's text. */
  optionsMini: readonly (Float32Array | null)[];
  optionsUse: readonly (Float32Array | null)[];
  /** The state's place on the polarity axis through s(z), unsigned. */
  polarity: number;
  pairMini: number | null;
  pairUse: number | null;
  /** ln(1 + the state's words). */
  lnWords: number;
}

/**
 * Every signal a map may name, for a yes/no question (one row): the standardized cosines of the state
 * with the plain question, whether it asks about spam, the side asked for times the state's polarity,
 * whether an emotion names that side, and the cosines of a pair's two parts.
 */
const NOUL_SIGNAL_OF: Record<string, (x: ZeroShotInput, p: PoolContext) => number> = {
  zMiniLM: (x, p) => (x.stateMini && x.questionMini ? standardized(p, p.minilm, x.stateMini, x.questionMini) : 0),
  zUSE: (x, p) => (x.questionUse ? standardized(p, p.use, x.stateUse, x.questionUse) : 0),
  spam: (x) => (x.family === 'spam' ? 1 : 0),
  'side*s(z)': (x) => x.direction * x.polarity,
  emotion: (x) => (x.emotion ? 1 : 0),
  'emotion*side*s(z)': (x) => (x.emotion ? x.direction * x.polarity : 0),
  'zMiniLM*lnWords': (x, p) => (NOUL_SIGNAL_OF.zMiniLM?.(x, p) ?? 0) * x.lnWords,
  'zUSE*lnWords': (x, p) => (NOUL_SIGNAL_OF.zUSE?.(x, p) ?? 0) * x.lnWords,
  pairMiniLM: (x) => x.pairMini ?? 0,
  pairUSE: (x) => x.pairUse ?? 0,
};

/** A choice's standardized cosines per option, computed once (0 for "none of the others" options). */
interface ChoiceCosines {
  mini: number[];
  use: number[];
}

function choiceCosines(x: ZeroShotInput, k: number, p: PoolContext): ChoiceCosines {
  const mini: number[] = [];
  const use: number[] = [];
  for (let j = 0; j < k; j++) {
    const m = x.optionsMini[j];
    const u = x.optionsUse[j];
    const named = !x.residual?.[j];
    mini.push(named && x.stateMini && m ? standardized(p, p.minilm, x.stateMini, m) : 0);
    use.push(named && u ? standardized(p, p.use, x.stateUse, u) : 0);
  }
  return { mini, use };
}

/** An option's value minus the best of the other named options' (0 for a residual option). */
function gap(values: readonly number[], x: ZeroShotInput, j: number): number {
  if (x.residual?.[j]) return 0;
  let best = Number.NEGATIVE_INFINITY;
  values.forEach((v, i) => {
    if (i !== j && !x.residual?.[i]) best = Math.max(best, v);
  });
  return Number.isFinite(best) ? (values[j] ?? 0) - best : 0;
}

/**
 * Every signal a choice map may name, per option: its standardized cosines (0 for a "none of the
 * others" option); their gap to the best other option's (a softmax over it sharpens where one option
 * stands out, which a temperature on the cosines alone cannot tell from many close options); whether
 * it is such an option (its weight is the threshold the named options must beat); and its side times
 * the state's polarity (0 for options without a side).
 */
const CHOICE_SIGNAL_OF: Record<string, (x: ZeroShotInput, j: number, c: ChoiceCosines) => number> = {
  zMiniLM: (_x, j, c) => c.mini[j] ?? 0,
  zUSE: (_x, j, c) => c.use[j] ?? 0,
  gapMiniLM: (x, j, c) => gap(c.mini, x, j),
  gapUSE: (x, j, c) => gap(c.use, x, j),
  residual: (x, j) => (x.residual?.[j] ? 1 : 0),
  'side*s(z)': (x, j) => (x.residual?.[j] ? 0 : (x.optionSides?.[j] ?? 0) * x.polarity),
};

/** A yes/no question's signals, in the order named. */
export function noulSignalRow(signals: readonly string[], x: ZeroShotInput, p: PoolContext): number[] {
  return signals.map((s) => NOUL_SIGNAL_OF[s]?.(x, p) ?? 0);
}

/** A choice's signals, one row per option, in the order named. */
export function choiceSignalRows(signals: readonly string[], x: ZeroShotInput, k: number, p: PoolContext): number[][] {
  const c = choiceCosines(x, k, p);
  return Array.from({ length: k }, (_, j) => signals.map((s) => CHOICE_SIGNAL_OF[s]?.(x, j, c) ?? 0));
}

/** Whether a map's signal names are all known (zeroshot.json is checked with it). */
export function knownSignals(map: SignalMap, choice: boolean): boolean {
  const table = choice ? CHOICE_SIGNAL_OF : NOUL_SIGNAL_OF;
  return map.signals.length === map.weights.length && map.signals.every((s) => s in table);
}

/** The yes/no map that answers a family, or null (the family abstains: the engine's usual answer stands). */
export function noulMapOf(model: ZeroShotModel, family: QuestionFamily): SignalMap | null {
  if (family === 'topic' || family === 'spam') return model.noul.content;
  if (family === 'polarity') return model.noul.polarity;
  if (family === 'pair') return model.noul.pair;
  return null;
}

/**
 * The zero-shot answer of a question (noul: [P(no), P(yes)] for its plain wording; choice: one per
 * option), or null where its family has no map: score questions (their polarity answer is model.ts's),
 * choices about what the encoders cannot read, and families that abstain.
 */
export function zeroShotAnswer(model: ZeroShotModel, type: string, k: number, x: ZeroShotInput): number[] | null {
  if (type === 'noul') {
    const map = noulMapOf(model, x.family);
    if (!map) return null;
    return noulAnswer(map, noulSignalRow(map.signals, x, model.pools));
  }
  if (type === 'choice' && model.choice && (x.family === 'topic' || x.family === 'polarity'))
    return choiceAnswer(model.choice, choiceSignalRows(model.choice.signals, x, k, model.pools));
  return null;
}
