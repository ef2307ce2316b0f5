/**
 * Stage Z of `npm run train` (issue 31): brier-lite 4's zero-shot family maps, fitted and measured
 * leave-source-out (families.ts) on the sets' own yes/no and choice questions and on the questions
 * generated from their labels (templates.ts), and written as zeroshot.json.
 *
 * Every question is read exactly as the engine reads it (texts.ts with plain negations, features.ts
 * buildInput, model.ts zeroShotInput), from the disk caches of both encoders.
 */
import type { PoolFile, SignalMapFile, ZeroShotFile } from '../engines/embedded/artifacts.ts';
import {
  buildInput,
  type PolarityAxis,
  stateFacts,
  type VectorLookup,
  ZERO_VECTOR,
} from '../engines/embedded/features.ts';
import { MINILM_DIM } from '../engines/embedded/minilm.ts';
import { zeroShotInput } from '../engines/embedded/model.ts';
import { EMBEDDING_DIM } from '../engines/embedded/pool.ts';
import type { QuestionFamily } from '../engines/embedded/reading.ts';
import { requestTexts } from '../engines/embedded/texts.ts';
import type { ReferencePool, SignalMap } from '../engines/embedded/zero-shot.ts';
import type { DecisionRequest } from '../engines/request.ts';
import { encodeFloats } from './artifact.ts';
import { MAP_SETS } from './config.ts';
import { type Example, hash32 } from './data.ts';
import {
  assemblePool,
  FAMILY_SIGNALS,
  type FamilyFit,
  type FamilyItem,
  fitChoiceMap,
  fitNoulMap,
  POOL_PER_SET,
  poolContext,
  poolParts,
  ZERO_SHOT_SATURATION,
} from './families.ts';
import type { GeneratedItem } from './templates.ts';

export const ZEROSHOT_ENCODER = 'all-MiniLM-L6-v2 (int8 ONNX, models/all-MiniLM-L6-v2) beside USE-lite';

/** The maps' names in zeroshot.json and the families each answers. */
export const MAPS = {
  content: { type: 'noul', families: ['topic', 'spam'] },
  polarity: { type: 'noul', families: ['polarity'] },
  pair: { type: 'noul', families: ['pair'] },
  choice: { type: 'choice', families: ['topic', 'polarity'] },
} as const satisfies Record<string, { type: 'noul' | 'choice'; families: readonly QuestionFamily[] }>;
export type MapName = keyof typeof MAPS;

export interface ZeroShotFit {
  file: Omit<ZeroShotFile, 'modelId'>;
  /** Per map: the fit, with every item's held-out answer (its source left out). */
  fits: Record<MapName, FamilyFit<FamilyItem> & { map: SignalMap }>;
  /** Held-out answers of the sets' own rows, by example id (stage B puts them in place of the unseen answer). */
  rowAnswers: Map<string, number[]>;
  /** Every item, with the family its question reads as. */
  items: (FamilyItem & { family: QuestionFamily; kind: string })[];
}

export interface Encoders {
  use: VectorLookup;
  mini: VectorLookup;
  polarity: PolarityAxis;
}

/** A request's single question as the engine reads it, or null when its type has no zero-shot map. */
function itemOf(
  e: Encoders,
  request: DecisionRequest,
  meta: { source: string; id: string; target: number; negated: boolean; pair: string | null },
): (FamilyItem & { family: QuestionFamily }) | null {
  const rt = requestTexts(request, undefined, true);
  const q = rt.questions[0];
  if (!q || q.type === 'score') return null;
  const need = (t: string): Float32Array => {
    const v = e.mini.get(t);
    if (!v) throw new Error(`stage Z: no MiniLM embedding for ${JSON.stringify(t.slice(0, 60))}`);
    return v;
  };
  const state = e.use.get(rt.state) ?? ZERO_VECTOR;
  const x = buildInput(q, state, e.use, stateFacts(rt), e.polarity, { state: need(rt.state), vectors: e.mini });
  const input = zeroShotInput(x, ZERO_SHOT_SATURATION);
  if (!input) return null;
  return { ...meta, type: q.type, k: x.k, input, family: q.reading.family };
}

/** The pool of each encoder per set: POOL_PER_SET states drawn by id hash (label-free). */
function poolsBySet(examples: readonly Example[], e: Encoders) {
  const mini = new Map<string, Float32Array[]>();
  const use = new Map<string, Float32Array[]>();
  for (const ex of examples) {
    if (hash32(`pool:${ex.id}`) % 5 !== 0) continue;
    const list = mini.get(ex.task) ?? [];
    if (list.length >= POOL_PER_SET) continue;
    const state = requestTexts(ex.request).state;
    const m = e.mini.get(state);
    const u = e.use.get(state);
    if (!m || !u) continue;
    list.push(m);
    mini.set(ex.task, list);
    use.set(ex.task, [...(use.get(ex.task) ?? []), u]);
  }
  return { mini: poolParts(mini, MINILM_DIM), use: poolParts(use, EMBEDDING_DIM) };
}

export function poolFile(p: ReferencePool): PoolFile {
  return {
    dim: p.dim,
    rank: p.variances.length,
    mean: encodeFloats(p.mean),
    basis: encodeFloats(p.basis),
    variances: Array.from(p.variances, (v) => Number(v.toPrecision(7))),
    residual: Number(p.residual.toPrecision(7)),
  };
}

function mapFile(m: SignalMap): SignalMapFile | null {
  if (m.alpha >= 1) return null;
  const r = (v: number) => Number(v.toFixed(6));
  return { signals: m.signals, weights: m.weights.map(r), bias: r(m.bias), alpha: m.alpha };
}

/**
 * Fits every map. `examples`: the sets' rows (their own questions); `generated`: templates.ts items.
 * Items whose question reads as another family than a map's are not that map's.
 */
export function fitZeroShot(
  examples: readonly Example[],
  generated: readonly GeneratedItem[],
  e: Encoders,
  log: (m: string) => void,
): ZeroShotFit {
  const items: ZeroShotFit['items'] = [];
  for (const ex of examples) {
    const it = itemOf(e, ex.request, { source: ex.task, id: ex.id, target: ex.target, negated: false, pair: null });
    if (it) items.push({ ...it, kind: 'native' });
  }
  for (const g of generated) {
    if (g.kind === 'native') continue;
    const ex = g.example;
    const it = itemOf(e, ex.request, {
      source: g.source,
      id: ex.id,
      target: ex.target,
      negated: g.negated,
      pair: g.pair,
    });
    if (it) items.push({ ...it, kind: g.kind });
  }
  const parts = poolsBySet(examples, e);
  const cache = new Map<string, ReturnType<typeof poolContext>>();
  const poolsWithout = (s: string | null) => {
    const key = s ?? '';
    let p = cache.get(key);
    if (!p) {
      p = poolContext(assemblePool(parts.mini, s), assemblePool(parts.use, s));
      cache.set(key, p);
    }
    return p;
  };
  const fits = {} as ZeroShotFit['fits'];
  for (const name of Object.keys(MAPS) as MapName[]) {
    const { type, families } = MAPS[name];
    const mine = items.filter((it) => it.type === type && (families as readonly QuestionFamily[]).includes(it.family));
    const signals = FAMILY_SIGNALS[name];
    const trains = (source: string) => MAP_SETS.has(source);
    fits[name] =
      type === 'noul'
        ? fitNoulMap(signals, mine, poolsWithout, trains)
        : fitChoiceMap(signals, mine, poolsWithout, trains);
    log(
      `stage Z ${name}: ${mine.length} items from ${new Set(mine.map((it) => it.source)).size} sets; map ${JSON.stringify(fits[name].map)}`,
    );
  }
  const rowAnswers = new Map<string, number[]>();
  for (const name of Object.keys(MAPS) as MapName[])
    for (const h of fits[name].heldOut) if (!h.item.id.includes('#')) rowAnswers.set(h.item.id, h.p);
  const all = poolsWithout(null);
  return {
    file: {
      format: 'brier-lite-zeroshot/1',
      encoder: ZEROSHOT_ENCODER,
      pools: { minilm: poolFile(all.minilm), use: poolFile(all.use) },
      noul: { content: mapFile(fits.content.map), polarity: mapFile(fits.polarity.map), pair: mapFile(fits.pair.map) },
      choice: mapFile(fits.choice.map),
      saturation: ZERO_SHOT_SATURATION,
    },
    fits,
    rowAnswers,
    items,
  };
}
