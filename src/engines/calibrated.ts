/**
 * Calibration of a model Brier did not train (a GGUF file, an upstream server): the engine's raw
 * label probabilities are mapped per question type by the same map brier-lite's calibration uses
 * (src/engines/embedded/calibration.ts):
 *
 *   p = (1 - alpha) * softmax(ln p_raw / T) + alpha / k
 *
 * One (T, alpha) per question type (noul, choice, score), fitted by `brier models calibrate`
 * (src/training/model-calibration.ts) on the shipped calibration set or an account's examples and
 * stored as `<dir>/<key>.json`, where the key names the model: `gguf-<sha256 of the file>`, or for
 * a server `upstream-`/`openai-` plus the sha256 of its base URL and the model asked for
 * (BRIER_UPSTREAM_MODEL). It is read when the engine loads.
 *
 * A model without a calibration file is not served raw: each answer is mixed half and half with the
 * uniform answer (UNCALIBRATED_SHRINK), and /v1/models says `x_calibrated: false`. That is a blind
 * shrink, not a calibration (no data says it is enough); `BRIER_UNCALIBRATED=raw` serves the raw
 * probabilities instead (for a server already calibrated, such as another Brier).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as z from 'zod';
import { type CalibrationParams, calibrate } from './embedded/calibration.ts';
import type { DecisionEngine, EngineAnswer } from './engine.ts';
import type { DecisionQuestion } from './request.ts';

export const MODEL_CALIBRATION_FORMAT = 'brier-model-calibration/1';
/** Calibration files are small (a few KiB); anything past this is not one. */
export const MAX_CALIBRATION_FILE_BYTES = 1 << 20;
/** What an uncalibrated model's answers are mixed with: the uniform answer at this weight, T = 1. */
export const UNCALIBRATED_SHRINK: CalibrationParams = Object.freeze({ temperature: 1, alpha: 0.5 });

export const QUESTION_TYPES = ['noul', 'choice', 'score'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

const Params = z.object({
  temperature: z.number().positive().finite(),
  alpha: z.number().min(0).max(1),
  /** The lowest alpha the fit was allowed (raised until every held-out source set was at or below uniform). */
  alpha_floor: z.number().min(0).max(1),
});

const Metrics = z.object({
  n: z.number().int().nonnegative(),
  accuracy: z.number(),
  brier: z.number(),
  nll: z.number(),
  ece: z.number(),
  ece_floor: z.number(),
});
export type CalibrationMetrics = z.infer<typeof Metrics>;

const ReportRow = z.object({
  type: z.enum(QUESTION_TYPES),
  /** The source set, or null for all rows of the type. */
  set: z.string().nullable(),
  n: z.number().int().nonnegative(),
  /** Brier of the uniform answer on these rows. */
  uniform_brier: z.number(),
  /** The raw answers. */
  before: Metrics,
  /** The calibration as fitted on all rows (in-sample). */
  after: Metrics,
  /** Each set answered by a calibration fitted without it (leave one source set out); null with one set. */
  held_out: Metrics.nullable(),
});
export type CalibrationReportRow = z.infer<typeof ReportRow>;

export const ModelCalibrationFile = z.object({
  format: z.literal(MODEL_CALIBRATION_FORMAT),
  /** The key the file is stored under, and what it was computed from. */
  model: z.object({ key: z.string().max(200), name: z.string().max(1000) }),
  fitted_at: z.string().max(40),
  data: z.object({
    source: z.enum(['shipped', 'examples', 'file']),
    name: z.string().max(1000),
    sha256: z.string().max(64),
    rows: z.number().int().nonnegative(),
  }),
  /** Per question type; a type absent here is answered with UNCALIBRATED_SHRINK. */
  types: z.object({ noul: Params.optional(), choice: Params.optional(), score: Params.optional() }),
  report: z.array(ReportRow).max(1000),
});
export type ModelCalibrationFile = z.infer<typeof ModelCalibrationFile>;

/**
 * An engine's calibration as a worker sends it to its gateways (src/worker/app.ts), so a gateway's
 * /v1/models and model page describe the calibration its workers answer with.
 */
export const EngineCalibrationWire = z.object({
  calibrated: z.boolean(),
  mode: z.enum(['fitted', 'shrink', 'raw']),
  key: z.string().max(200),
  types: z.object({
    noul: Params.pick({ temperature: true, alpha: true }).nullable(),
    choice: Params.pick({ temperature: true, alpha: true }).nullable(),
    score: Params.pick({ temperature: true, alpha: true }).nullable(),
  }),
  file: ModelCalibrationFile.nullable(),
});

/** What a calibrated engine reports about its calibration (the console's model page, /v1/models). */
export interface EngineCalibration {
  /** True when every question type has a fitted calibration. */
  calibrated: boolean;
  /** fitted: from the file (types it lacks are shrunk); shrink: no file; raw: no file, served as they come. */
  mode: 'fitted' | 'shrink' | 'raw';
  key: string;
  /** The map each type is answered with (null: raw). */
  types: Record<QuestionType, CalibrationParams | null>;
  file: ModelCalibrationFile | null;
}

export type UncalibratedPolicy = 'shrink' | 'raw';

export function calibrationPath(dir: string, key: string): string {
  if (!/^[a-z]+-[0-9a-f]{64}$/.test(key)) throw new Error(`calibration key ${key} is not <kind>-<sha256>`);
  return join(dir, `${key}.json`);
}

/**
 * The key of a GGUF file: its sha256. Hashing reads the whole file (measured 0.75 s for a 94 MiB file
 * on 2 busy cores, so tens of seconds for a model of several GiB), so where `cacheDir` is given the
 * hash is kept in `<cacheDir>/hashes.json` by the file's real path, size and modification time, and
 * read again only when one of them changes.
 */
export async function ggufCalibrationKey(path: string, cacheDir?: string): Promise<string> {
  const file = await realpath(path);
  const info = await stat(file);
  const cachePath = cacheDir === undefined ? null : join(cacheDir, 'hashes.json');
  let cache: Record<string, { size: number; mtimeMs: number; sha256: string }> = {};
  if (cachePath !== null) {
    try {
      const text = await readFile(cachePath, 'utf8');
      if (text.length <= MAX_CALIBRATION_FILE_BYTES) cache = JSON.parse(text) as typeof cache;
    } catch {
      cache = {};
    }
    const hit = cache[file];
    if (hit && hit.size === info.size && hit.mtimeMs === info.mtimeMs && /^[0-9a-f]{64}$/.test(hit.sha256)) {
      return `gguf-${hit.sha256}`;
    }
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  if (cachePath !== null) {
    cache[file] = { size: info.size, mtimeMs: info.mtimeMs, sha256 };
    // (best effort: a read-only data directory only costs the hash at the next start)
    await mkdir(dirname(cachePath), { recursive: true })
      .then(() => writeFile(cachePath, `${JSON.stringify(cache, null, 2)}\n`))
      .catch(() => undefined);
  }
  return `gguf-${sha256}`;
}

/** The key of a model behind a server: its kind, base URL and the model asked for ('' for its default). */
export function serverCalibrationKey(kind: 'upstream' | 'openai', baseUrl: string, model: string): string {
  return `${kind}-${createHash('sha256').update(`${baseUrl}\u0000${model}`).digest('hex')}`;
}

/** Where a model Brier did not train comes from: a GGUF file, or a server and the model asked of it. */
export type ModelSource =
  | { kind: 'gguf'; path: string; prompt?: 'plain' | 'chat' | undefined }
  | { kind: 'upstream' | 'openai'; baseUrl: string; model: string };

/**
 * The calibration key of a model source, computed when asked (a GGUF file is hashed; see
 * ggufCalibrationKey). A GGUF file prompted in its chat template answers differently from the same file
 * prompted in plain text, so it has a calibration of its own: `ggufchat-<sha256>`.
 */
export function sourceCalibrationKey(source: ModelSource, dir: string): () => Promise<string> {
  if (source.kind !== 'gguf') return async () => serverCalibrationKey(source.kind, source.baseUrl, source.model);
  const chat = source.prompt === 'chat';
  return async () => {
    const key = await ggufCalibrationKey(source.path, dir);
    return chat ? key.replace(/^gguf-/, 'ggufchat-') : key;
  };
}

/**
 * Wraps an engine serving the model `source` with that model's calibration: the file of its
 * sourceCalibrationKey in `dir`, read when the engine loads (teachers, a gateway's backends).
 */
export function withSourceCalibration(
  engine: DecisionEngine,
  source: ModelSource,
  options: { dir: string; uncalibrated: UncalibratedPolicy },
): CalibratedEngine {
  const { dir, uncalibrated } = options;
  return withModelCalibration(engine, { dir, key: sourceCalibrationKey(source, dir), uncalibrated });
}

/** Reads and checks `<dir>/<key>.json`; null when there is none. Throws on a malformed file or a key mismatch. */
export async function readModelCalibration(dir: string, key: string): Promise<ModelCalibrationFile | null> {
  const path = calibrationPath(dir, key);
  const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (info === null) return null;
  if (info.size > MAX_CALIBRATION_FILE_BYTES) {
    throw new Error(`${path}: ${info.size} bytes, a calibration file has at most ${MAX_CALIBRATION_FILE_BYTES}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = ModelCalibrationFile.safeParse(json);
  if (!parsed.success) throw new Error(`${path}: not a calibration file: ${parsed.error.issues[0]?.message ?? ''}`);
  if (parsed.data.model.key !== key) throw new Error(`${path}: fitted for ${parsed.data.model.key}, not ${key}`);
  return parsed.data;
}

/** How an engine answers each type given its calibration file (or none) and the policy for what has none. */
export function resolveModelCalibration(
  key: string,
  file: ModelCalibrationFile | null,
  policy: UncalibratedPolicy,
): EngineCalibration {
  const fallback = policy === 'raw' ? null : UNCALIBRATED_SHRINK;
  const types = {} as Record<QuestionType, CalibrationParams | null>;
  for (const type of QUESTION_TYPES) {
    const fitted = file?.types[type];
    types[type] = fitted ? { temperature: fitted.temperature, alpha: fitted.alpha } : fallback;
  }
  return {
    calibrated: file !== null && QUESTION_TYPES.every((t) => file.types[t] !== undefined),
    mode: file !== null ? 'fitted' : policy,
    key,
    types,
    file,
  };
}

/** One question's probabilities through a (T, alpha) map; null leaves them as they are. */
export function applyModelCalibration(p: readonly number[], params: CalibrationParams | null): number[] {
  if (params === null) return [...p];
  return calibrate(
    p.map((v) => Math.log(Math.max(1e-12, v))),
    params,
  );
}

export function calibrateAnswer(
  answer: EngineAnswer,
  questions: readonly DecisionQuestion[],
  calibration: EngineCalibration,
): EngineAnswer {
  return {
    ...answer,
    probabilities: answer.probabilities.map((p, i) =>
      applyModelCalibration(p, calibration.types[questions[i]?.type ?? 'choice']),
    ),
  };
}

export interface CalibratedEngineOptions {
  /** Where calibration files live (`<data dir>/calibration`). */
  dir: string;
  /** The model's key, computed once the engine has loaded. */
  key: (engine: DecisionEngine) => Promise<string>;
  uncalibrated?: UncalibratedPolicy;
}

/** An engine serving a model Brier did not train, with its calibration (null until loaded). */
export type CalibratedEngine = DecisionEngine & { readonly calibration: EngineCalibration | null };

/**
 * Wraps an engine: its answers go through the model's calibration, read when it loads. Everything
 * else (info, limits, features) is the inner engine's, read through at each use.
 */
export function withModelCalibration(engine: DecisionEngine, options: CalibratedEngineOptions): CalibratedEngine {
  let current: EngineCalibration | null = null;
  let loading: Promise<void> | null = null;
  async function load(): Promise<void> {
    await engine.load();
    if (current !== null) return;
    loading ??= (async () => {
      const key = await options.key(engine);
      current = resolveModelCalibration(
        key,
        await readModelCalibration(options.dir, key),
        options.uncalibrated ?? 'shrink',
      );
    })().finally(() => {
      loading = null;
    });
    await loading;
  }
  return {
    get info() {
      return engine.info;
    },
    get limits() {
      return engine.limits;
    },
    get parallelism() {
      return engine.parallelism;
    },
    get features() {
      return engine.features;
    },
    get calibration() {
      return current;
    },
    attachMetrics: engine.attachMetrics ? (m) => engine.attachMetrics?.(m) : undefined,
    load,
    ready: () => engine.ready() && current !== null,
    countTokens: (request) => engine.countTokens(request),
    async answer(request, signal) {
      const calibration = current;
      if (calibration === null) throw new Error(`engine ${engine.info.id} is not loaded: call load() first`);
      return calibrateAnswer(await engine.answer(request, signal), request.questions, calibration);
    },
    async close() {
      current = null;
      await engine.close();
    },
  };
}
