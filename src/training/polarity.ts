/**
 * The polarity answer of score questions on a polarity scale (model.ts `polarityAnswer`): gamma,
 * delta and alpha fitted on the sets whose scale runs along the polarity axis, each set answered by
 * the parameters fitted without it (leave one set out). The fit takes the setting with the largest
 * gain on the set it helps least (relative Brier against uniform), so that no fitted set is above
 * uniform; among settings within 1e-9 of it, the gentlest. Measured on the three polarity sets, each
 * left out (the lexicon axis of brier-lite 3.6): this rule gave Brier / ECE airline_sentiment
 * 0.2019 / 0.109, tweeteval_sentiment 0.1839 / 0.054, sst5 0.1496 / 0.047; the cautious rule of 3.5
 * (the gentlest setting keeping half that gain) 0.2083 / 0.106, 0.2025 / 0.169, 0.1532 / 0.082; the
 * best mean NLL without delta 0.1836 / 0.061, 0.2035 / 0.108, 0.1517 / 0.093. Its weight,
 * sigmoid((|scale| - center) / width), is fixed (POLARITY_WEIGHT): the sets' scales are either along
 * the `levels` direction (|scale| 0.68 to 1 here) or across it (below 0.13), with no evidence in
 * between to fit a boundary on.
 */
import type { PolarityCalibration } from '../engines/embedded/artifacts.ts';
import { polarityAnswer } from '../engines/embedded/model.ts';
import { hardBrier, uniformBrier } from './stage-b.ts';

export const POLARITY_WEIGHT = { center: 0.4, width: 0.05 } as const;

export interface PolarityItem {
  task: string;
  k: number;
  /** The state's standardized place on the axis, and the scale's cosine with it. */
  state: number;
  scale: number;
  target: number;
}

type Params = Required<Pick<PolarityCalibration, 'gamma' | 'delta' | 'alpha'>>;

const GAMMAS = [0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5, 2, 2.5, 3] as const;
const DELTAS = [-1.5, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5] as const;
const ALPHAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] as const;
const UNIFORM: Params = { gamma: 0, delta: 0, alpha: 1 };

function answer(it: PolarityItem, p: Params): number[] {
  return polarityAnswer(it.state, Math.sign(it.scale), it.k, { ...POLARITY_WEIGHT, ...p });
}

/**
 * The smallest relative Brier gain over the tasks of `items` (1 - Brier / uniform Brier, per task);
 * negative when some task is worse than uniform.
 */
function worstGain(items: readonly PolarityItem[], p: Params): number {
  const sums = new Map<string, { brier: number; n: number; k: number }>();
  for (const it of items) {
    const s = sums.get(it.task) ?? { brier: 0, n: 0, k: it.k };
    s.brier += hardBrier(answer(it, p), it.target);
    s.n++;
    sums.set(it.task, s);
  }
  let worst = Number.POSITIVE_INFINITY;
  for (const s of sums.values()) worst = Math.min(worst, 1 - s.brier / s.n / uniformBrier(s.k));
  return worst;
}

/** The fit described above; the uniform answer when no setting helps every task. */
export function fitPolarityParams(items: readonly PolarityItem[]): Params {
  const scored = GAMMAS.flatMap((gamma) =>
    DELTAS.flatMap((delta) => ALPHAS.map((alpha) => ({ p: { gamma, delta, alpha }, gain: 0 }))),
  );
  for (const s of scored) s.gain = s.p.gamma === 0 ? 0 : worstGain(items, s.p);
  const best = Math.max(...scored.map((s) => s.gain));
  if (!(best > 0)) return UNIFORM;
  // the gentlest of the best: the smallest gamma, then the smallest |delta|, then the most shrink
  const kept = scored
    .filter((s) => s.gain >= best - 1e-9)
    .sort((a, b) => a.p.gamma - b.p.gamma || Math.abs(a.p.delta) - Math.abs(b.p.delta) || b.p.alpha - a.p.alpha);
  return kept[0]?.p ?? UNIFORM;
}

/**
 * The shipped polarity calibration (fitted on every polarity set) and each polarity set's held-out
 * answers (fitted without it). Items of sets whose scale is not along the axis are ignored.
 */
export function fitPolarity(items: readonly PolarityItem[]): {
  calibration: PolarityCalibration;
  heldOut: Map<PolarityItem, number[]>;
} {
  const on = items.filter((it) => Math.abs(it.scale) >= POLARITY_WEIGHT.center);
  const tasks = [...new Set(on.map((it) => it.task))].sort();
  const heldOut = new Map<PolarityItem, number[]>();
  if (tasks.length > 1) {
    for (const t of tasks) {
      const p = fitPolarityParams(on.filter((it) => it.task !== t));
      for (const it of on) if (it.task === t) heldOut.set(it, answer(it, p));
    }
  }
  return { calibration: { ...POLARITY_WEIGHT, ...fitPolarityParams(on) }, heldOut };
}
