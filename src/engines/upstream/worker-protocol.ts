/**
 * The internal protocol between gateways and Brier inference workers (BRIER_ROLE=worker). It carries
 * the engine-facing request (engines/request.ts) and the engine's unrounded answer, so that an answer
 * through a worker is the answer the engine gives in-process. Public API keys never reach a worker:
 * the gateway checks them, and the worker accepts only `Authorization: Bearer <BRIER_WORKER_TOKEN>`.
 *
 * - `GET  /internal/v1/model`: the model's info, limits and parallelism.
 * - `POST /internal/v1/answer`: `{request}` -> `{probabilities, inputTokens, outputTokens}`;
 *   refusals use the one error body (503 `overloaded`/`not_ready` with retry-after, 400 `max_tokens_exceeded`...).
 * - `GET  /healthz`: 200 once the engine is loaded (no credential: load balancers and probes).
 */
import * as z from 'zod';
import type { Json } from '../request.ts';

export const WORKER_MODEL_PATH = '/internal/v1/model';
export const WORKER_ANSWER_PATH = '/internal/v1/answer';

const JsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

const Option = z.object({ label: z.string(), description: z.string().nullable() });

export const WorkerAnswerRequest = z.object({
  request: z.object({
    state: z.object({ text: z.string(), json: JsonValue.optional() }),
    questions: z
      .array(
        z.object({
          type: z.enum(['noul', 'choice', 'score']),
          instructions: z.string().nullable(),
          options: z.array(Option).min(2).max(255),
        }),
      )
      .min(1),
  }),
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

export const WorkerModel = z.object({
  info: z.object({ id: z.string(), description: z.string(), releaseDate: z.string() }),
  limits: z.object({ contextTokens: z.number().int().positive(), inputTokens: z.number().int().positive() }),
  parallelism: z.number().int().positive(),
  /** The worker's BRIER_QUEUE_LIMIT: requests it takes at once before it answers 503. */
  queueLimit: z.number().int().positive(),
});
export type WorkerModel = z.infer<typeof WorkerModel>;
