/**
 * Stage S of `npm run train` (issue 38): gathers every held-out answer the earlier stages made (every
 * labelled row of every set, leave-tasks-out through stage B; every question generated from the labels,
 * through the zero-shot maps fitted without its set; CalDec's measured half, through the model fitted
 * before the skill model) with its question's frame, fits the skill model (skill-fit.ts) and writes
 * skill.json's contents.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SkillFile } from '../engines/embedded/artifacts.ts';
import { SKILL_FORMAT } from '../engines/embedded/artifacts.ts';
import type { QuestionInput, QuestionType } from '../engines/embedded/features.ts';
import { type Model, predictUngated } from '../engines/embedded/model.ts';
import type { SkillModel } from '../engines/embedded/skill.ts';
import { requestTexts } from '../engines/embedded/texts.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { encodeFloats } from './artifact.ts';
import type { CaldecCase } from './caldec.ts';
import { type Example, REPO_ROOT } from './data.ts';
import { oneHot } from './evaluation.ts';
import { fitSkill, type SkillFit, type SkillItem } from './skill-fit.ts';
import type { GeneratedItem } from './templates.ts';
import type { ZeroShotFit } from './zero-shot-fit.ts';

export interface StageSInput {
  examples: readonly Example[];
  generated: readonly GeneratedItem[];
  zeroShot: ZeroShotFit;
  /** Every labelled row's leave-tasks-out answer (stage B), by example id. */
  lotoHeldOut: readonly { id?: string; type: QuestionType; p: number[]; target: number; seenWeight?: number }[];
  /** CalDec's measured half. */
  caldec: readonly CaldecCase[];
  inputsOf: (request: DecisionRequest) => QuestionInput[];
  /** The model of stages A, B and Z, before the skill model. */
  model: Model;
  /** A frame's USE-lite embedding (training's cache), or null. */
  frameVector: (text: string) => Float32Array | null;
  log: (m: string) => void;
}

function questionOf(request: DecisionRequest, qi = 0) {
  const q = requestTexts(request, undefined, true).questions[qi];
  if (!q) throw new Error('stage S: a request without its question');
  return q;
}

/** Every held-out answer with its unit, set and frame. */
export function skillItems(s: StageSInput): SkillItem[] {
  const items: SkillItem[] = [];
  const byId = new Map(s.examples.map((ex) => [ex.id, ex]));
  const item = (
    unit: string,
    set: string,
    request: DecisionRequest,
    qi: number,
    p: number[],
    t: number[],
    type: QuestionType,
  ): SkillItem => {
    const q = questionOf(request, qi);
    return { unit, set, type, frameText: q.frame, frame: s.frameVector(q.frame), family: q.reading.family, p, t };
  };
  for (const h of s.lotoHeldOut) {
    const ex = h.id ? byId.get(h.id) : undefined;
    if (!ex) throw new Error(`stage S: no example ${h.id}`);
    const it = item(`${ex.task}/own`, ex.task, ex.request, 0, h.p, oneHot(h.p.length, h.target), h.type);
    items.push(h.seenWeight ? { ...it, seen: h.seenWeight } : it);
  }
  // generated questions: the held-out answer of the map their reading gives them, else the uniform
  // answer (the head's unseen yes/no answer is uniform; a question no family reads is counted as such)
  const answered = new Map<string, number[]>();
  for (const fit of Object.values(s.zeroShot.fits)) for (const h of fit.heldOut) answered.set(h.item.id, h.p);
  for (const g of s.generated) {
    if (g.kind === 'native') continue;
    const ex = g.example;
    const q = ex.request.questions[0];
    if (!q) continue;
    const k = q.options.length;
    const p = answered.get(ex.id) ?? Array.from({ length: k }, () => 1 / k);
    items.push(item(`${g.source}/${g.kind}`, g.source, ex.request, 0, p, oneHot(k, ex.target), q.type));
  }
  for (const c of s.caldec) {
    s.inputsOf(c.request).forEach((x, qi) => {
      const t = c.targets[qi];
      if (!t) return;
      const answer = predictUngated(x, s.model);
      const it = item(`caldec/${c.site}`, `caldec:${c.site}`, c.request, qi, answer.probabilities, t, x.type);
      items.push(answer.seenWeight > 0 ? { ...it, seen: answer.seenWeight } : it);
    });
  }
  return items;
}

export function skillFileOf(model: SkillModel, modelId: string): SkillFile {
  return {
    format: SKILL_FORMAT,
    modelId,
    encoder: 'USE-lite (the frames: instructions with quotes masked, and option names or level texts)',
    sharpness: model.sharpness,
    prior: model.prior,
    quantile: model.quantile,
    floor: model.floor,
    units: model.units.map((u) => ({
      name: u.name,
      type: u.type,
      centroid: encodeFloats(u.centroid),
      skill: Number(u.skill.toFixed(6)),
      weight: Number(u.weight.toFixed(6)),
    })),
  };
}

/** Where train keeps stage S's held-out answers (without frames), for `npm run train:skill` to refit from. */
export const STAGE_S_ITEMS = join(REPO_ROOT, '.cache', 'brier-lite', 'stage-s-items.jsonl');

export function writeStageSItems(items: readonly SkillItem[]): void {
  mkdirSync(dirname(STAGE_S_ITEMS), { recursive: true });
  writeFileSync(STAGE_S_ITEMS, items.map(({ frame: _frame, ...rest }) => JSON.stringify(rest)).join('\n'));
}

export function readStageSItems(frameVector: (text: string) => Float32Array | null): SkillItem[] {
  return readFileSync(STAGE_S_ITEMS, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const it = JSON.parse(line) as Omit<SkillItem, 'frame'>;
      return { ...it, frame: frameVector(it.frameText) };
    });
}

export function runStageS(s: StageSInput): { items: SkillItem[]; fit: SkillFit } {
  const items = skillItems(s);
  s.log(`stage S: ${items.length} held-out answers in ${new Set(items.map((i) => i.unit)).size} kinds of question`);
  return { items, fit: fitSkill(items, s.log) };
}
