/**
 * The familiarity blend (model.ts `predict`): a question is answered with weight
 * w = sigmoid((s - center) / width) as its nearest training task (s: the cosine of the two
 * instructions, same type and option count), and 1 - w as an unseen task. Fitted leave-tasks-out:
 * each task's rows answered by the nearest OTHER training task (a head trained without it, its beta
 * refit without it) and by the unseen calibration fitted without it.
 */
import type { Familiarity } from '../engines/embedded/artifacts.ts';
import { familiarityWeight } from '../engines/embedded/model.ts';
import { hardBrier } from './stage-b.ts';

export interface BlendItem {
  task: string;
  target: number;
  /** The unseen family's held-out answer. */
  pUnseen: number[];
  /** The nearest other training task's answer and the instructions' cosine; null: no such task. */
  seen: { p: number[]; similarity: number } | null;
}

/** The blended answer of one item under `f`. */
export function blend(item: BlendItem, f: Familiarity): number[] {
  if (!item.seen) return item.pUnseen;
  const w = familiarityWeight(item.seen.similarity, f);
  const seen = item.seen.p;
  return item.pUnseen.map((p, i) => w * (seen[i] ?? 0) + (1 - w) * p);
}

/** A question asked exactly as in training (cosine 1) keeps at least this weight on its task's answer. */
export const IN_DISTRIBUTION_WEIGHT = 0.99;
const CENTERS = Array.from({ length: 61 }, (_, i) => Number((0.7 + i * 0.005).toFixed(3)));
const WIDTHS = [0.05, 0.03, 0.02, 0.015, 0.01, 0.005] as const;

/**
 * The (center, width) with the lowest task-balanced NLL over `items` such that every task's Brier
 * stays at or below `cap` (the uniform answer's) or its unblended Brier, whichever is higher, and a
 * training task's own question (cosine 1) keeps IN_DISTRIBUTION_WEIGHT. Where the data cannot tell
 * settings apart (no item has a cosine in the range they differ on), the widest width, then the
 * middle of the indistinguishable centers: the blend is as gradual as the evidence allows and claims
 * no transfer it has not measured.
 */
export function fitFamiliarity(items: readonly BlendItem[], cap: (task: string) => number): Familiarity {
  const tasks = new Map<string, number>();
  for (const it of items) tasks.set(it.task, (tasks.get(it.task) ?? 0) + 1);
  const meanBrier = (answer: (it: BlendItem) => number[]) => {
    const sums = new Map<string, number>();
    for (const it of items) sums.set(it.task, (sums.get(it.task) ?? 0) + hardBrier(answer(it), it.target));
    return new Map([...sums].map(([t, s]) => [t, s / (tasks.get(t) ?? 1)]));
  };
  const unblended = meanBrier((it) => it.pUnseen);
  const lossOf = (f: Familiarity): number => {
    const briers = meanBrier((it) => blend(it, f));
    for (const [t, b] of briers)
      if (b > Math.max(cap(t), unblended.get(t) ?? 0) + 1e-9) return Number.POSITIVE_INFINITY;
    let loss = 0;
    for (const it of items) {
      const p = blend(it, f)[it.target] ?? 0;
      loss -= Math.log(Math.max(1e-12, p)) / (tasks.get(it.task) ?? 1) / tasks.size;
    }
    return loss;
  };
  let best = Number.POSITIVE_INFINITY;
  const scored: { f: Familiarity; loss: number }[] = [];
  for (const width of WIDTHS)
    for (const center of CENTERS) {
      const f = { center, width };
      if (familiarityWeight(1, f) < IN_DISTRIBUTION_WEIGHT) continue;
      const loss = lossOf(f);
      scored.push({ f, loss });
      if (loss < best) best = loss;
    }
  const ties = scored.filter((s) => s.loss <= best + 1e-6);
  const width = Math.max(...ties.map((s) => s.f.width));
  const centers = ties.filter((s) => s.f.width === width).map((s) => s.f.center);
  const center = centers[Math.floor((centers.length - 1) / 2)] ?? 0.92;
  return { center, width };
}
