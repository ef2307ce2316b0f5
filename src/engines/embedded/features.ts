/**
 * Pure feature code shared by the engine and the training pipeline: from embeddings of the texts
 * in texts.ts to one `QuestionInput` per question, and from there to the small per-option scalar
 * features the head weighs. Everything is per option with shared weights, so choice answers are
 * invariant to option order by construction.
 */
import type { DecisionQuestion } from '../request.ts';
import { EMBEDDING_DIM } from './pool.ts';
import type { QuestionReading } from './reading.ts';
import type { QuestionTexts, RequestTexts } from './texts.ts';

export type QuestionType = DecisionQuestion['type'];

export interface QuestionInput {
  type: QuestionType;
  /** Number of options. */
  k: number;
  /** State embedding (unit). */
  s: Float32Array;
  /** Instruction embedding or null. */
  i: Float32Array | null;
  /** Option embeddings (null: the option has no text). noul: [false, true]. */
  o: (Float32Array | null)[];
  /** Cosine between the two parts of a detected pair, or null. */
  pairSim: number | null;
  /** The state's mean sentence length, standardized (see sentenceLength). */
  sentLen: number;
  /** The state came as a JSON object or array (see texts.ts `structured`). */
  structured: boolean;
  /** StateFacts `lnWords` (absent: 0). */
  lnWords?: number;
  /** Where the state and the question stand on the polarity axis (see `PolarityAxis`); absent: 0, 0. */
  polarity?: { state: number; scale: number };
  /** How the question reads (reading.ts). */
  reading?: QuestionReading;
  /**
   * The second encoder's vectors (MiniLM, brier-lite 4), laid out like `s`, `o` and `pairSim`; absent
   * where the model has no zero-shot part. `s` is null when no question of the request needed it.
   */
  mini?: { s: Float32Array | null; o: (Float32Array | null)[]; pairSim: number | null };
  /** The question's frame embedding (texts.ts `frame`; skill.ts places the question's skill by it), or null. */
  frame?: Float32Array | null;
}

/**
 * The polarity of the encoder's space, two unit directions: `axis`, where states lie (the mean of
 * hand-written positive sentences minus that of negative ones; training's polarity-lexicon.ts), with
 * the mean training state (`center`) and the spread of the states along it (`scale`); and `levels`,
 * the embedding of "positive" minus that of "negative", along which a polarity scale's level texts
 * differ. A state's place on `axis` is a plain signal of sentiment-like scales; a score question
 * whose lowest and highest levels differ along `levels` (very negative ... very positive) reads it.
 */
export interface PolarityAxis {
  axis: Float32Array;
  levels: Float32Array;
  center: Float32Array;
  scale: number;
}

/**
 * The state's standardized place on the axis, and how much the question's scale is a polarity: the
 * cosine of (highest level - lowest level) with `levels` (score questions with both texts; else 0).
 */
export function polarityOf(
  type: QuestionType,
  state: Float32Array,
  options: readonly (Float32Array | null)[],
  axis: PolarityAxis,
): { state: number; scale: number } {
  let along = 0;
  for (let d = 0; d < axis.axis.length; d++) along += ((state[d] ?? 0) - (axis.center[d] ?? 0)) * (axis.axis[d] ?? 0);
  const lo = options[0];
  const hi = options.at(-1);
  let scale = 0;
  if (type === 'score' && lo && hi && options.length >= 2) {
    let num = 0;
    let norm = 0;
    for (let d = 0; d < axis.axis.length; d++) {
      const v = (hi[d] ?? 0) - (lo[d] ?? 0);
      num += v * (axis.levels[d] ?? 0);
      norm += v * v;
    }
    scale = norm > 1e-12 ? num / Math.sqrt(norm) : 0;
  }
  return { state: axis.scale > 0 ? along / axis.scale : 0, scale };
}

/** What the head and the calibration read from the state besides its embedding: the same for every question. */
export interface StateFacts {
  sentLen: number;
  /** ln(1 + the state's words): a long text and a short utterance are read best by different encoders. */
  lnWords: number;
  structured: boolean;
}

/** Computed once per request. */
export function stateFacts(rt: RequestTexts): StateFacts {
  const words = rt.state.split(/\s+/).filter((w) => w.length > 0).length;
  return { sentLen: sentenceLength(rt.state), lnWords: Math.log1p(words), structured: rt.structured };
}

export const SCALAR_FEATURES: Record<QuestionType, readonly string[]> = {
  // noul: features of the `true` option; the `false` row is all zeros (its logit is the baseline).
  noul: ['bias', 'cos(s,true)-cos(s,false)', 'pairSim', 'hasPair'],
  choice: ['cos(s,o)', 'z(cos)', 'z(cos)*ln(k)'],
  score: ['u', 'u^2', 'cos(s,o)', 'z(cos)', 'u*ordSlope', 'u*pairSim', 'u*hasPair', 'u*sentLen'],
};

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += (a[d] ?? 0) * (b[d] ?? 0);
  return s;
}

const ZERO = new Float32Array(EMBEDDING_DIM);

/**
 * The state's mean sentence length in words, standardized: (words per sentence - 20) / 5, clipped
 * to [-4, 4] (a state with no sentence breaks would otherwise dominate). Sentences end at ., ! or ?
 * followed by white space, and at line breaks. A reading-level signal that the sentence encoder
 * does not carry (without it the head had no skill on onestop_english, three reading levels of the
 * same articles: accuracy 0.325 vs 0.333); score questions weigh it per level (`u*sentLen`).
 */
export function sentenceLength(text: string): number {
  let words = 0;
  let sentences = 0;
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    const n = sentence.split(/\s+/).filter((w) => w.length > 0).length;
    if (n === 0) continue;
    words += n;
    sentences++;
  }
  if (sentences === 0) return 0;
  return Math.max(-4, Math.min(4, (words / sentences - 20) / 5));
}

/** The cosine of a pair's two parts in one encoder's vectors, or null. */
function pairCosine(pair: [string, string] | null, get: (t: string | null) => Float32Array | null): number | null {
  const a = pair ? get(pair[0]) : null;
  const b = pair ? get(pair[1]) : null;
  return a && b ? dot(a, b) : null;
}

/** Embeddings by text (a Map, or training's disk store). */
export interface VectorLookup {
  get(text: string): Float32Array | undefined;
}

export function buildInput(
  q: QuestionTexts,
  stateVec: Float32Array,
  vectors: VectorLookup,
  facts: StateFacts,
  polarity?: PolarityAxis,
  mini?: { state: Float32Array | null; vectors: VectorLookup },
): QuestionInput {
  const get = (t: string | null): Float32Array | null => (t ? (vectors.get(t) ?? null) : null);
  const pairSim = pairCosine(q.pair, get);
  const o = q.options.map(get);
  const getMini = (t: string | null): Float32Array | null => (t && mini ? (mini.vectors.get(t) ?? null) : null);
  return {
    type: q.type,
    k: q.options.length,
    s: stateVec,
    i: get(q.instruction),
    o,
    pairSim,
    sentLen: facts.sentLen,
    lnWords: facts.lnWords,
    structured: facts.structured,
    ...(polarity ? { polarity: polarityOf(q.type, stateVec, o, polarity) } : {}),
    reading: q.reading,
    frame: get(q.frame),
    ...(mini ? { mini: { s: mini.state, o: q.options.map(getMini), pairSim: pairCosine(q.pair, getMini) } } : {}),
  };
}

/** Position of level j of k in [-1, 1] (score). */
export function levelPosition(j: number, k: number): number {
  return k <= 1 ? 0 : (2 * j) / (k - 1) - 1;
}

/** Per-option scalar features, row-major k x SCALAR_FEATURES[type].length. */
export function scalarFeatures(x: QuestionInput): Float64Array {
  const names = SCALAR_FEATURES[x.type];
  const d = names.length;
  const out = new Float64Array(x.k * d);
  const hasPair = x.pairSim === null ? 0 : 1;
  const pairSim = x.pairSim ?? 0;
  if (x.type === 'noul') {
    const cf = x.o[0] ? dot(x.s, x.o[0]) : 0;
    const ct = x.o[1] ? dot(x.s, x.o[1]) : 0;
    // row 0 (false) stays zero
    out[d + 0] = 1;
    out[d + 1] = ct - (x.o[0] ? cf : 0);
    out[d + 2] = pairSim;
    out[d + 3] = hasPair;
    return out;
  }
  const c = x.o.map((o) => (o ? dot(x.s, o) : 0));
  const mean = c.reduce((a, b) => a + b, 0) / Math.max(1, c.length);
  const sd = Math.sqrt(c.reduce((a, b) => a + (b - mean) * (b - mean), 0) / Math.max(1, c.length));
  const z = c.map((v) => (v - mean) / (sd + 0.02));
  if (x.type === 'choice') {
    const lnk = Math.log(Math.max(2, x.k));
    for (let j = 0; j < x.k; j++) {
      out[j * d + 0] = c[j] ?? 0;
      out[j * d + 1] = z[j] ?? 0;
      out[j * d + 2] = (z[j] ?? 0) * lnk;
    }
    return out;
  }
  let num = 0;
  let den = 0;
  for (let j = 0; j < x.k; j++) {
    const u = levelPosition(j, x.k);
    num += u * (z[j] ?? 0);
    den += u * u;
  }
  const slope = den > 0 ? num / den : 0;
  for (let j = 0; j < x.k; j++) {
    const u = levelPosition(j, x.k);
    const row = j * d;
    out[row + 0] = u;
    out[row + 1] = u * u;
    out[row + 2] = c[j] ?? 0;
    out[row + 3] = z[j] ?? 0;
    out[row + 4] = u * slope;
    out[row + 5] = u * pairSim;
    out[row + 6] = u * hasPair;
    out[row + 7] = u * x.sentLen;
  }
  return out;
}

export { ZERO as ZERO_VECTOR };

/** Names of the question-level descriptors the calibration reads (never the logits themselves). */
export const DESCRIPTORS = [
  '1',
  'hasPair',
  '10*sd(cos(s,o))',
  'ln(k)',
  '10*(top1-top2 cos(s,o))',
  '10*(mean cos(s,o) - 0.2)',
  'structured',
] as const;

/**
 * Question-level descriptors d(q) on which temperature and prior weight depend: how much a
 * question looks like one the encoder has signal for. They do not depend on the logits, so for a
 * given question the calibration map stays monotone in the logits. The mean cosine tells options
 * that all resemble the state (continuations, paraphrases: word overlap, not evidence) from
 * options that name what the state may be about (topics, intents), whose cosines are low but
 * informative where they differ.
 */
export function descriptors(x: QuestionInput): number[] {
  let spread = 0;
  let margin = 0;
  let level = 0;
  if (x.type !== 'noul') {
    const c = x.o.map((o) => (o ? dot(x.s, o) : 0));
    const mean = c.reduce((a, b) => a + b, 0) / Math.max(1, c.length);
    spread = 10 * Math.sqrt(c.reduce((a, b) => a + (b - mean) * (b - mean), 0) / Math.max(1, c.length));
    const sorted = [...c].sort((a, b) => b - a);
    margin = 10 * ((sorted[0] ?? 0) - (sorted[1] ?? 0));
    level = 10 * (mean - 0.2);
  }
  return [1, x.pairSim === null ? 0 : 1, spread, Math.log(Math.max(2, x.k)), margin, level, x.structured ? 1 : 0];
}
