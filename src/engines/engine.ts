import type { EngineCalibration } from './calibrated.ts';
import type { DecisionQuestion, DecisionRequest } from './request.ts';

/**
 * Characters allowed per token of a limit. A request whose texts are longer than its token limits
 * times this is refused before any tokenizer reads it (tokenizing a megabyte takes the main thread
 * about a second); below it, the tokenizer's exact count decides. No English, code or JSON text
 * measured here comes near it (USE-lite reads ~4.2 characters a token; its longest piece is 16).
 */
export const MAX_CHARS_PER_TOKEN = 16;

/** Token limits a model enforces, as /v1/models reports them. */
export interface EngineLimits {
  /** Max tokens of the state plus all questions of one request. */
  contextTokens: number;
  /** Max tokens of the state plus the longest question. */
  inputTokens: number;
}

/** What the engine's tokenizer counts for one request. */
export interface TokenCounts {
  state: number;
  /** One entry per question, in request order (instructions plus options as the engine reads them). */
  questions: number[];
}

export interface EngineAnswer {
  /**
   * One probability vector per question, in request order, over that question's options in
   * their order (noul: [P(false), P(true)]). Each sums to 1, unrounded.
   */
  probabilities: number[][];
  /** Tokens the engine read: the state once plus each question. */
  inputTokens: number;
  /** Option tokens scored (0 when the engine scores no option tokens). */
  outputTokens: number;
}

/** Static facts about the model an engine serves, for /v1/models and the console. */
export interface ModelInfo {
  /** The exact versioned id, e.g. brier-lite-4.2.0. */
  id: string;
  description: string;
  /** YYYY-MM-DD */
  releaseDate: string;
}

/**
 * Optional instrumentation an engine reports to (src/observability/metrics.ts implements it).
 * Engines work without it; every call must be cheap.
 */
export interface EngineMetrics {
  /** `count` lookups of cache `cache` that hit (or missed). */
  cacheLookup(cache: string, hit: boolean, count?: number): void;
  /** One engine call over `size` items of `kind` (e.g. texts per encoder call). */
  batch(engine: string, kind: string, size: number): void;
  /** `tokens` evaluated in `seconds` during `phase` (prefill, question, encode). */
  tokens(engine: string, phase: string, tokens: number, seconds: number): void;
}

/**
 * State features an engine exposes for adapters (src/engines/adapters): a probe fitted on them by a
 * training job runs on the same features at serving time. The embedded engine's are its USE-lite
 * state embedding; engines without features get calibration-only adapters.
 */
/** The first `dim` features of a feature space, which one encoder (`name`) computes alone. */
export interface FeaturePrefix {
  dim: number;
  name: string;
}

export interface EngineFeatures {
  /** Names the feature space; an adapter's probe runs only where the engine's id is the same. */
  id: string;
  dim: number;
  /**
   * Where the first features cost less than all of them (the embedded engine: USE-lite's 512 of
   * [USE-lite | MiniLM], without a MiniLM encoding): a head reading only those is served at the
   * cost of that encoder alone. Absent: every feature costs the same.
   */
  prefix?: FeaturePrefix;
  /**
   * The features of a request's state, as the engine reads it (cheap right after answering it).
   * `dims`: only the first `dims` are read, so the engine may leave the rest zero (default all).
   */
  state(request: DecisionRequest, signal?: AbortSignal, dims?: number): Promise<Float32Array>;
  /**
   * The features of each option of a choice question, in its option order, in the same space as the
   * states (null: an option without text). A probe starts from them (a label prior), which helps most
   * where a task has many options and few examples of each. Absent: no label prior.
   */
  options?(question: DecisionQuestion, signal?: AbortSignal): Promise<(Float32Array | null)[]>;
}

/**
 * A decision engine answers every question of a request with a probability distribution,
 * without generating text. Implementations live in engines/<name>/ and are built by factories.
 */
export interface DecisionEngine {
  readonly info: ModelInfo;
  readonly limits: EngineLimits;
  /** Loads weights; resolves when the engine can answer. Idempotent. */
  load(): Promise<void>;
  /** True once load() has resolved and the engine has not been closed. */
  ready(): boolean;
  countTokens(request: DecisionRequest): Promise<TokenCounts>;
  /** Answers; rejects with signal.reason once the signal aborts. */
  answer(request: DecisionRequest, signal: AbortSignal): Promise<EngineAnswer>;
  close(): Promise<void>;
  /**
   * Requests the engine can usefully take at once (the scheduler's concurrency): above 1 the
   * engine batches the work of concurrent requests. Absent: 1.
   */
  readonly parallelism?: number;
  /** Reports to `metrics` from now on (optional; engines built with a metrics option need not). */
  attachMetrics?(metrics: EngineMetrics): void;
  /** State features for adapters' probes (optional). */
  readonly features?: EngineFeatures;
  /**
   * The calibration of a model Brier did not train (src/engines/calibrated.ts): null until loaded.
   * Absent: the engine's probabilities are calibrated by its own training (brier-lite) or it is a
   * test engine.
   */
  readonly calibration?: EngineCalibration | null;
}
