/**
 * Runs the Stage A fits (final, leave-one-training-task-out, 4-fold) and keeps their results in
 * .cache/brier-lite, keyed by everything that determines them (configuration, rows, and fingerprints
 * of their embeddings and scalar features), so that re-running `npm run train` after a calibration
 * change takes seconds.
 * The fits are deterministic, so the cache only saves time.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeFloats } from '../engines/embedded/artifacts.ts';
import { type QuestionType, SCALAR_FEATURES } from '../engines/embedded/features.ts';
import { type BilinearWeights, bilinearForward } from '../engines/embedded/head.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import { encodeFloats } from './artifact.ts';
import { averageBilinear } from './bilinear.ts';
import { HEAD_TASKS, SEEN_FOLDS, STAGE_A } from './config.ts';
import { type Example, hash32, REPO_ROOT } from './data.ts';
import { type Row, type StageAOptions, type StageAResult, trainStageA } from './stage-a.ts';

export interface StageAOutputs {
  final: StageAResult;
  /** Scores of every row of a training task from the head fitted without that task. */
  leaveOut: Map<string, Float64Array>;
  /** Scores of every training row from the fold head that did not see it. */
  folds: Map<string, Float64Array>;
}

type R = Row & { ex: Example };

export function foldOf(id: string): number {
  return (hash32(`fold:${id}`) >>> 3) % SEEN_FOLDS;
}

function weightsToJson(w: BilinearWeights): Record<string, string | number> {
  return {
    rank: w.noul.rank,
    nU: encodeFloats(w.noul.U),
    nV: encodeFloats(w.noul.V),
    cU: encodeFloats(w.choice.U),
    cV: encodeFloats(w.choice.V),
    sU: encodeFloats(w.score.U),
    sV: encodeFloats(w.score.V),
    sP: encodeFloats(w.score.P),
    sQ: encodeFloats(w.score.Q),
  };
}

function weightsFromJson(j: Record<string, string | number>): BilinearWeights {
  const rank = Number(j.rank);
  const m = (k: string): Float32Array => decodeFloats(String(j[k]), EMBEDDING_DIM * rank, k);
  return {
    noul: { rank, U: m('nU'), V: m('nV') },
    choice: { rank, U: m('cU'), V: m('cV') },
    score: { rank, U: m('sU'), V: m('sV'), P: m('sP'), Q: m('sQ') },
  };
}

export function runStageA(rows: R[], headTrain: R[], log: (m: string) => void, config: StageAOptions): StageAOutputs {
  const key = hash32(
    JSON.stringify({
      STAGE_A: config,
      SEEN_FOLDS,
      head: [...HEAD_TASKS].sort(),
      n: rows.length,
      ids: headTrain.map((r) => r.ex.id).join('|'),
      // the inputs themselves: a change of embeddings (encoder window, chunking) or of the scalar
      // features (trained jointly with the head) refits
      inputs: hash32(rows.map((r) => Array.from(r.x.s.subarray(0, 4), (v) => v.toFixed(5)).join(',')).join('|')),
      features: SCALAR_FEATURES,
      psi: hash32(rows.map((r) => Array.from(r.psi, (v) => v.toFixed(5)).join(',')).join('|')),
    }),
  );
  const path = join(REPO_ROOT, '.cache', 'brier-lite', `stage-a-${key.toString(16)}.json`);
  if (existsSync(path)) {
    const j = JSON.parse(readFileSync(path, 'utf8')) as {
      final: { weights: Record<string, string | number>; beta: StageAResult['beta'] };
      leaveOut: Record<string, number[]>;
      folds: Record<string, number[]>;
    };
    log(`stage A: reusing ${path}`);
    return {
      final: { weights: weightsFromJson(j.final.weights), beta: j.final.beta },
      leaveOut: new Map(Object.entries(j.leaveOut).map(([k, v]) => [k, Float64Array.from(v)])),
      folds: new Map(Object.entries(j.folds).map(([k, v]) => [k, Float64Array.from(v)])),
    };
  }
  log(`stage A: ${headTrain.length} training rows`);
  const final = trainStageA(headTrain, config);
  log('stage A: final fit done');
  const leaveOut = new Map<string, Float64Array>();
  for (const task of HEAD_TASKS) {
    const fit = trainStageA(
      headTrain.filter((r) => r.task !== task),
      config,
    );
    for (const r of rows) if (r.task === task) leaveOut.set(r.ex.id, bilinearForward(r.x, fit.weights).bil);
    log(`stage A: leave-out ${task} done`);
  }
  const folds = new Map<string, Float64Array>();
  for (let f = 0; f < SEEN_FOLDS; f++) {
    const fit = trainStageA(
      headTrain.filter((r) => foldOf(r.ex.id) !== f),
      config,
    );
    for (const r of headTrain) if (foldOf(r.ex.id) === f) folds.set(r.ex.id, bilinearForward(r.x, fit.weights).bil);
    log(`stage A: fold ${f + 1}/${SEEN_FOLDS} done`);
  }
  const round = (m: Map<string, Float64Array>): Record<string, number[]> =>
    Object.fromEntries([...m].map(([k, v]) => [k, [...v]]));
  writeFileSync(
    path,
    JSON.stringify({
      final: { weights: weightsToJson(final.weights), beta: final.beta },
      leaveOut: round(leaveOut),
      folds: round(folds),
    }),
  );
  return { final, leaveOut, folds };
}

/**
 * Stage A once per seed (each cached on its own), averaged per type: each type's final head is the
 * mean of its seeds' heads (head.ts averageBilinear), and every out-of-task and out-of-fold score
 * of a row the mean of the scores from its type's seeds.
 */
export function runStageASeeds(
  rows: R[],
  headTrain: R[],
  log: (m: string) => void,
  seeds: Record<QuestionType, readonly number[]>,
  config: Omit<StageAOptions, 'seed'> = STAGE_A,
): StageAOutputs {
  const runs = new Map<number, StageAOutputs>();
  for (const seed of new Set(Object.values(seeds).flat())) {
    log(`stage A: seed ${seed}`);
    runs.set(seed, runStageA(rows, headTrain, log, { ...config, seed }));
  }
  const runsOf = (type: QuestionType): [StageAOutputs, ...StageAOutputs[]] => {
    const [first, ...rest] = seeds[type].map((seed) => runs.get(seed)).filter((r) => r !== undefined);
    if (!first) throw new Error(`stage A: no seed for ${type}`);
    return [first, ...rest];
  };
  const typeOf = new Map(rows.map((r) => [r.ex.id, r.x.type]));
  const mean = (pick: (o: StageAOutputs) => Map<string, Float64Array>): Map<string, Float64Array> => {
    const out = new Map<string, Float64Array>();
    for (const type of ['noul', 'choice', 'score'] as const) {
      const [first, ...rest] = runsOf(type);
      for (const [id, v] of pick(first)) {
        if (typeOf.get(id) !== type) continue;
        const sum = Float64Array.from(v);
        for (const run of rest) {
          const w = pick(run).get(id);
          if (!w) throw new Error(`stage A: a seed without a score for ${id}`);
          for (let k = 0; k < sum.length; k++) sum[k] = (sum[k] ?? 0) + (w[k] ?? 0);
        }
        out.set(
          id,
          sum.map((x) => x / (rest.length + 1)),
        );
      }
    }
    return out;
  };
  const heads = (type: QuestionType) => runsOf(type).map((r) => r.final.weights);
  return {
    final: {
      weights: averageBilinear({ noul: heads('noul'), choice: heads('choice'), score: heads('score') }),
      // stage A's own betas are not shipped (stage B refits them per family)
      beta: runsOf('choice')[0].final.beta,
    },
    leaveOut: mean((o) => o.leaveOut),
    folds: mean((o) => o.folds),
  };
}
