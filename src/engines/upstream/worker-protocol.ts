/**
 * The internal protocol between gateways and Brier inference workers (BRIER_ROLE=worker). It carries
 * the engine-facing request (engines/request.ts) and the engine's unrounded answer, so that an answer
 * through a worker is the answer the engine gives in-process. Public API keys never reach a worker:
 * the gateway checks them, and the worker accepts only `Authorization: Bearer <BRIER_WORKER_TOKEN>`.
 *
 * - `GET  /internal/v1/model`: the model's info, limits and parallelism.
 * - `POST /internal/v1/answer`: `{request}` -> `{probabilities, inputTokens, outputTokens}`;
 *   refusals use the one error body (503 `overloaded`/`not_ready` with retry-after, 400 `max_tokens_exceeded`...).
 * - `POST /internal/v1/features`: `{request, dims?}` -> `{state}` (the state features of the request, as the
 *   worker's engine reads them) or `{question}` -> `{options}` (a choice question's option features),
 *   vectors as base64 little-endian float32; only where `GET /internal/v1/model` names `features`.
 *   Adapters' probes read them, so that an adapter answers through a gateway as on one server.
 * - `GET  /healthz`: 200 once the engine is loaded (no credential: load balancers and probes).
 */

import * as z from 'zod';
import { EngineCalibrationWire } from '../calibrated.ts';
import type { Json } from '../request.ts';

export const WORKER_MODEL_PATH = '/internal/v1/model';
export const WORKER_ANSWER_PATH = '/internal/v1/answer';
export const WORKER_FEATURES_PATH = '/internal/v1/features';

const JsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

const Option = z.object({ label: z.string(), description: z.string().nullable() });

const Question = z.object({
  type: z.enum(['noul', 'choice', 'score']),
  instructions: z.string().nullable(),
  options: z.array(Option).min(2).max(255),
});

const EngineRequest = z.object({
  state: z.object({ text: z.string(), json: JsonValue.optional() }),
  questions: z.array(Question).min(1),
});

export const WorkerAnswerRequest = z.object({
  request: EngineRequest,
  /** Names of the questions in error messages (default "question 1", "question 2"...): the engine interface does not carry the caller's ids. */
  names: z.array(z.string()).optional(),
});
export type WorkerAnswerRequest = z.infer<typeof WorkerAnswerRequest>;

/** Loose: fields an engine's answer gains later reach the gateway unchanged. */
export const WorkerAnswer = z.looseObject({
  probabilities: z.array(z.array(z.number())),
  inputTokens: z.number(),
  outputTokens: z.number(),
});

/** Exactly one of: the state features of `request`, or the option features of `question`. */
export const WorkerFeaturesRequest = z.union([
  /** `dims`: only the first `dims` features are read (EngineFeatures.state); absent: all. */
  z.object({ request: EngineRequest, dims: z.number().int().positive().max(1_000_000).optional() }).strict(),
  z.object({ question: Question }).strict(),
]);
export type WorkerFeaturesRequest = z.infer<typeof WorkerFeaturesRequest>;

/** A feature vector on the wire: base64 of little-endian float32. */
const Vector = z.string().max(1_000_000);
export const WorkerFeatures = z.union([z.object({ state: Vector }), z.object({ options: z.array(Vector.nullable()) })]);

export function encodeVector(v: Float32Array): string {
  const out = Buffer.alloc(v.length * 4);
  for (let i = 0; i < v.length; i++) out.writeFloatLE(v[i] ?? 0, i * 4);
  return out.toString('base64');
}

export function decodeVector(s: string, dim: number): Float32Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.byteLength !== dim * 4) throw new Error(`a feature vector of ${buf.byteLength / 4} numbers, expected ${dim}`);
  const out = new Float32Array(dim);
  for (let i = 0; i < dim; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}

export const WorkerModel = z.object({
  info: z.object({ id: z.string(), description: z.string(), releaseDate: z.string() }),
  limits: z.object({ contextTokens: z.number().int().positive(), inputTokens: z.number().int().positive() }),
  parallelism: z.number().int().positive(),
  /** The worker's BRIER_QUEUE_LIMIT: requests it takes at once before it answers 503. */
  queueLimit: z.number().int().positive(),
  /** The state features its engine has for adapters (EngineFeatures), or null; absent from older workers. */
  features: z
    .object({
      id: z.string(),
      dim: z.number().int().positive(),
      options: z.boolean(),
      /** EngineFeatures.prefix; absent from older workers (and engines without one). */
      prefix: z.object({ dim: z.number().int().positive(), name: z.string() }).optional(),
    })
    .nullable()
    .optional(),
  /**
   * The calibration its engine answers with (a GGUF or upstream model: src/engines/calibrated.ts), or
   * null where its training calibrates it (brier-lite); absent from older workers.
   */
  calibration: EngineCalibrationWire.nullable().optional(),
});
export type WorkerModel = z.infer<typeof WorkerModel>;
