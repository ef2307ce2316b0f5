/**
 * How far brier-lite's answer to a question may depart from the uniform answer (brier-lite 4.1, issue
 * 38): its skill, measured before it is used.
 *
 * The family maps and the head answer every question they can read; whether that answer carries
 * information for a kind of question is a fact about the data, not about the question's words. Stage S
 * of training (src/training/skill-fit.ts) measures it on every labelled set and CalDec site, each a
 * unit of question kind: the share s* in [0, 1] of its held-out answer's departure from uniform that
 * minimizes its Brier score (0: the answer tells nothing or points the wrong way; 1: as answered).
 *
 * A question is placed among those units by its frame (frameText: its instructions with quoted content
 * masked, and its options' names or levels), embedded by USE-lite: its skill is a weighted quantile of
 * the units' s* (same question type only), each unit weighted by a kernel of its frame's similarity,
 * beside a prior weight at s = 0, so that a question like none the model was measured on gets the
 * uniform answer, and one whose like kinds disagree gets the weaker ones' skill. The answer served is
 * p = s p_model + (1 - s) / k, and exactly uniform (x_abstained) below `floor`.
 */
import { dot, type QuestionType } from './features.ts';
import { QUOTED } from './reading.ts';

/** One measured unit: a source set's kind of question (or a CalDec site), where its frames lie. */
export interface SkillUnit {
  name: string;
  type: QuestionType;
  /** The unit's mean frame embedding, unit length. */
  centroid: Float32Array;
  /** s*: the Brier-optimal share of the departure from uniform, in [0, 1]. */
  skill: number;
  /** How much the unit counts (its rows, capped). */
  weight: number;
}

export interface SkillModel {
  /** Kernel sharpness: a unit at cosine c weighs exp(sharpness (c - 1)). */
  sharpness: number;
  /** The weight of the prior belief "no skill" (s = 0) beside the units'. */
  prior: number;
  /**
   * Which weighted quantile of the like units' skills a question gets (0.5: the median): below the
   * middle, a question whose like kinds disagree gets the skill of the weaker ones.
   */
  quantile: number;
  /** Below this skill the answer is the uniform answer (abstained). */
  floor: number;
  units: SkillUnit[];
}

/** At most this many option names or level texts in a frame (a 151-intent choice is still a choice of intents). */
export const FRAME_OPTIONS = 12;

/**
 * The words that say what kind of question this is: the instructions with quoted content masked (reading.ts
 * QUOTED: a question that only mentions something is not about it) and the options' names or levels.
 */
export function frameText(
  type: QuestionType,
  instructions: string | null,
  options: readonly { label: string; description: string | null }[],
): string {
  const own = (instructions ?? '').replace(QUOTED, '"…"').replace(/\s+/g, ' ').trim();
  let tail = '';
  // a choice's options in a fixed order (sorted), so that its skill does not depend on their order
  if (type === 'choice')
    tail = options
      .map((o) => o.label.replace(/_+/g, ' ').trim())
      .sort()
      .slice(0, FRAME_OPTIONS)
      .join(', ');
  else if (type === 'score')
    tail = options
      .slice(0, FRAME_OPTIONS)
      .map((o, i) => o.description?.trim() || String(i))
      .join(' / ');
  else tail = options[1]?.description?.trim() ?? '';
  return tail ? `${own}\n${tail}` : own;
}

/**
 * A question's skill from its frame embedding (null: no words to place it by, skill 0): the weighted
 * quantile of the units' skills (same type), each weighted by its kernel, with the prior's weight at 0.
 */
export function skillOf(model: SkillModel, type: QuestionType, frame: ArrayLike<number> | null): number {
  if (!frame) return 0;
  const like: { skill: number; weight: number }[] = [{ skill: 0, weight: model.prior }];
  for (const u of model.units)
    if (u.type === type)
      like.push({ skill: u.skill, weight: u.weight * Math.exp(model.sharpness * (dot(frame, u.centroid) - 1)) });
  return weightedQuantile(like, model.quantile);
}

/** The smallest value whose cumulative weight (values ascending) reaches q of the total. */
export function weightedQuantile(values: readonly { skill: number; weight: number }[], q: number): number {
  const sorted = [...values].sort((a, b) => a.skill - b.skill);
  let total = 0;
  for (const v of sorted) total += v.weight;
  if (!(total > 0)) return 0;
  let sum = 0;
  for (const v of sorted) {
    sum += v.weight;
    if (sum >= q * total - 1e-12) return v.skill;
  }
  return sorted.at(-1)?.skill ?? 0;
}

/** The answer with skill s: s of its departure from uniform kept; uniform below the floor. */
export function withSkill(p: readonly number[], s: number, floor: number): number[] {
  const k = p.length;
  if (s < floor) return p.map(() => 1 / k);
  const keep = Math.min(1, s);
  return p.map((v) => keep * v + (1 - keep) / k);
}
