/**
 * The polarity answer of score questions on a polarity scale (model.ts `polarityAnswer`): gamma,
 * delta, alpha and the saturation fitted on the sets whose scale runs along the polarity axis, each
 * set answered by the parameters fitted without it (leave one set out). The fit takes the setting
 * with the largest gain on the set it helps least (relative Brier against uniform), so that no fitted
 * set is above uniform; among settings within 1e-9 of it, the gentlest. Measured on the three
 * polarity sets, each left out (brier-lite 3.7's run, the polarity answer alone; Brier / ECE):
 * with the saturation in the grid airline_sentiment 0.2007 / 0.090, tweeteval_sentiment
 * 0.1788 / 0.024, sst5 0.1497 / 0.052; the same rule without it (3.6) 0.2042 / 0.121,
 * 0.1787 / 0.030, 0.1497 / 0.056. Earlier rules on 3.6's lexicon axis: the cautious rule of 3.5 (the
 * gentlest setting keeping half that gain) 0.2083 / 0.106, 0.2025 / 0.169, 0.1532 / 0.082; the best
 * mean NLL without delta 0.1836 / 0.061, 0.2035 / 0.108, 0.1517 / 0.093 (EXPERIMENTS.md). Its weight,
 * sigmoid((|scale| - center) / width), is fixed (POLARITY_WEIGHT): the sets' scales are either along
 * the `levels` direction (|scale| 0.68 to 1 here) or across it (below 0.13), with no evidence in
 * between to fit a boundary on.
 */
import type { PolarityCalibration } from '../engines/embedded/artifacts.ts';
import { polarityAnswer } from '../engines/embedded/model.ts';
import { uniformBrier } from './stage-b.ts';

export const POLARITY_WEIGHT = { center: 0.4, width: 0.05 } as const;

export interface PolarityItem {
  task: string;
  k: number;
  /** The state's standardized place on the axis, and the scale's cosine with it. */
  state: number;
  scale: number;
  target: number;
}

type Params = Required<Pick<PolarityCalibration, 'gamma' | 'delta' | 'alpha'>> &
  Pick<PolarityCalibration, 'saturation'>;

const GAMMAS = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4] as const;
const DELTAS = [-1.5, -1, -0.75, -0.5, -0.25, 0, 0.25, 0.5] as const;
const ALPHAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9] as const;
/** undefined: the state's place read linearly (brier-lite 3.6). */
const SATURATIONS = [undefined, 4, 3, 2, 1.5, 1, 0.75] as const;
const UNIFORM: Params = { gamma: 0, delta: 0, alpha: 1 };

function answer(it: PolarityItem, p: Params): number[] {
  return polarityAnswer(it.state, Math.sign(it.scale), it.k, { ...POLARITY_WEIGHT, ...p });
}

/**
 * For one (gamma, delta, saturation), the smallest relative Brier gain over the tasks of `items`
 * (1 - Brier / uniform Brier, per task; negative when some task is worse than uniform) at every alpha
 * of ALPHAS, from one pass: the shrunk answer (1 - a) p + a / k has k Brier |p - y|^2 +
 * 2a (p - y).(1/k - p) + a^2 |1/k - p|^2.
 */
function worstGains(items: readonly PolarityItem[], p: Omit<Params, 'alpha'>): number[] {
  const sums = new Map<string, { s0: number; s1: number; s2: number; n: number; k: number }>();
  for (const it of items) {
    const s = sums.get(it.task) ?? { s0: 0, s1: 0, s2: 0, n: 0, k: it.k };
    answer(it, { ...p, alpha: 0 }).forEach((v, j) => {
      const e = v - (j === it.target ? 1 : 0);
      const toUniform = 1 / it.k - v;
      s.s0 += e * e;
      s.s1 += e * toUniform;
      s.s2 += toUniform * toUniform;
    });
    s.n++;
    sums.set(it.task, s);
  }
  return ALPHAS.map((a) => {
    let worst = Number.POSITIVE_INFINITY;
    for (const s of sums.values()) {
      const brier = (s.s0 + 2 * a * s.s1 + a * a * s.s2) / s.k / s.n;
      worst = Math.min(worst, 1 - brier / uniformBrier(s.k));
    }
    return worst;
  });
}

/** The fit described above; the uniform answer when no setting helps every task. */
export function fitPolarityParams(items: readonly PolarityItem[]): Params {
  const scored = SATURATIONS.flatMap((saturation) => {
    const read = saturation === undefined ? {} : { saturation };
    return GAMMAS.flatMap((gamma) =>
      DELTAS.flatMap((delta) => {
        const gains = worstGains(items, { gamma, delta, ...read });
        return ALPHAS.map((alpha, i) => ({
          p: { gamma, delta, alpha, ...read },
          gain: gains[i] ?? Number.NEGATIVE_INFINITY,
        }));
      }),
    );
  });
  const best = Math.max(...scored.map((s) => s.gain));
  if (!(best > 0)) return UNIFORM;
  // the gentlest of the best: the smallest gamma, then the smallest |delta|, then the most shrink,
  // then the least saturation
  const kept = scored
    .filter((s) => s.gain >= best - 1e-9)
    .sort(
      (a, b) =>
        a.p.gamma - b.p.gamma ||
        Math.abs(a.p.delta) - Math.abs(b.p.delta) ||
        b.p.alpha - a.p.alpha ||
        (b.p.saturation ?? 1e9) - (a.p.saturation ?? 1e9),
    );
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
