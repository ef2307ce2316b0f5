/**
 * The System One wire protocol (POST /v1/systemone, GET /v1/models) as zod schemas: the one source of
 * its validation, its OpenAPI document and its TypeScript types. No HTTP here.
 */
import { z } from '@hono/zod-openapi';

/** Limits of the protocol itself (token limits come from the model). */
export const MAX_CHOICE_OPTIONS = 255;
export const MIN_CHOICE_OPTIONS = 2;
export const MAX_SCORE_LEVELS = 10;
export const MIN_SCORE_LEVELS = 2;
export const MAX_QUESTIONS = 256;
/** Characters of a question id, a choice label and a model name. */
export const MAX_QUESTION_ID_CHARS = 128;
export const MAX_LABEL_CHARS = 128;
export const MAX_MODEL_CHARS = 128;
/** JSON nesting of a request body; the body is level 1, so a JSON state gets 63 levels of its own. */
export const MAX_JSON_DEPTH = 64;

const JsonText = z
  .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], {
    error: 'must be a string, a JSON object or a JSON array',
  })
  .openapi({ description: 'Text, or structured JSON shown to the model as compact JSON.' });

const Description = z
  .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown()), z.null()], {
    error: 'must be a string, a JSON object, a JSON array or null',
  })
  .openapi({ description: 'Text, structured JSON, or null for none.' });

export const NoulQuestion = z
  .object({
    type: z.literal('noul'),
    instructions: Description.optional(),
    criteria: z
      .object({ true: Description.optional(), false: Description.optional() })
      .nullish()
      .openapi({ description: 'Optional descriptions of what yes (true) and no (false) mean.' }),
  })
  .openapi('NoulQuestion', { description: 'A yes/no question; the answer is P(yes).' });

const choiceCount = (criteria: unknown) =>
  `choice needs ${MIN_CHOICE_OPTIONS} to ${MAX_CHOICE_OPTIONS} labels, got ${Object.keys((criteria ?? {}) as object).length}`;

export const ChoiceQuestion = z
  .object({
    type: z.literal('choice'),
    instructions: Description.optional(),
    criteria: z
      .record(
        z
          .string()
          .min(1, 'labels must not be empty')
          .max(MAX_LABEL_CHARS, `a label has at most ${MAX_LABEL_CHARS} characters (the limit)`),
        Description,
      )
      .refine((c) => Object.keys(c).length >= MIN_CHOICE_OPTIONS, {
        error: (iss) => choiceCount(iss.input),
        params: { type: 'too_short' },
      })
      .refine((c) => Object.keys(c).length <= MAX_CHOICE_OPTIONS, {
        error: (iss) => choiceCount(iss.input),
        params: { type: 'too_long' },
      })
      .openapi({
        description: `Labels (1 to ${MAX_LABEL_CHARS} characters) mapped to descriptions (or null); ${MIN_CHOICE_OPTIONS} to ${MAX_CHOICE_OPTIONS} labels.`,
      }),
  })
  .openapi('ChoiceQuestion', { description: 'Pick one of named options.' });

export const ScoreQuestion = z
  .object({
    type: z.literal('score'),
    instructions: Description.optional(),
    criteria: z
      .array(
        z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())], {
          error: 'a score level must be a string, a JSON object or a JSON array (not null)',
        }),
      )
      .min(MIN_SCORE_LEVELS, `score needs ${MIN_SCORE_LEVELS} to ${MAX_SCORE_LEVELS} levels`)
      .max(MAX_SCORE_LEVELS, `score needs ${MIN_SCORE_LEVELS} to ${MAX_SCORE_LEVELS} levels`)
      .openapi({ description: `Ordered levels, lowest first; ${MIN_SCORE_LEVELS} to ${MAX_SCORE_LEVELS}.` }),
  })
  .openapi('ScoreQuestion', { description: 'An ordered scale; the answer is the expected level.' });

export const Question = z.discriminatedUnion('type', [NoulQuestion, ChoiceQuestion, ScoreQuestion]);

/** A question id: returned verbatim, never shown to the model, at most MAX_QUESTION_ID_CHARS characters. */
export const QuestionId = z
  .string()
  .max(MAX_QUESTION_ID_CHARS, `a question id has at most ${MAX_QUESTION_ID_CHARS} characters (the limit)`);

export const SystemOneRequest = z
  .object({
    model: z.string().max(MAX_MODEL_CHARS, `at most ${MAX_MODEL_CHARS} characters (the limit)`).optional().openapi({
      description:
        "brier-latest (default), jev-latest, jev-preview, the exact model id, or one of the account's adapters (ft:...).",
    }),
    state: JsonText,
    questions: z
      .record(QuestionId, Question)
      .refine((q) => Object.keys(q).length >= 1, {
        error: 'at least one question is required',
        params: { type: 'too_short' },
      })
      .refine((q) => Object.keys(q).length <= MAX_QUESTIONS, {
        error: (iss) =>
          `at most ${MAX_QUESTIONS} questions per request (the limit), got ${Object.keys((iss.input ?? {}) as object).length}`,
        params: { type: 'too_long' },
      })
      .openapi({
        description: `Question ids (at most ${MAX_QUESTION_ID_CHARS} characters, returned verbatim, never shown to the model) mapped to questions.`,
      }),
  })
  .openapi('SystemOneRequest');

export type SystemOneRequest = z.infer<typeof SystemOneRequest>;
/** A question as it arrives (validated). */
export type WireQuestion = z.infer<typeof Question>;
/** A state as it arrives: text, a JSON object or array, or the Vercel AI SDK's list of parts. */
export type WireState = SystemOneRequest['state'];

const Probabilities = z.record(z.string(), z.number()).openapi({
  description:
    'Per option, in hundredths (2 decimals) that sum to exactly 1 (largest remainder: each within 0.01 of the unrounded probability).',
});

/** Brier's extension to System One answers (clients that do not know it ignore it). */
const Abstained = z.boolean().openapi({
  description:
    "Brier extension: true when the answer carries no information (every unrounded probability within 0.02 of 1/k): the model abstained, and the numbers are the uninformative answer, not a judgement. The response's `x-brier-abstained` header lists such question ids (percent-encoded, comma-separated; `*` past 2,048 characters).",
});

/** Brier's extension naming who answered, when the request named an adapter (absent otherwise). */
const AnsweredBy = z.string().optional().openapi({
  description:
    "Brier extension, present when the request's `model` is one of the account's adapters: the adapter id when this question matched one of its templates (type, instructions and criteria) and the adapter answered it, or the base model id when the question fell back to the base model.",
});

/**
 * The extensions' names before 0.2.0, sent next to the `x_` ones only on a server started with
 * BRIER_LEGACY_EXTENSION_FIELDS=on (a deprecation period; see CHANGELOG.md).
 */
const Legacy = {
  abstained: z.boolean().optional().openapi({
    deprecated: true,
    description: 'Deprecated copy of x_abstained (BRIER_LEGACY_EXTENSION_FIELDS=on only).',
  }),
  answered_by: z.string().optional().openapi({
    deprecated: true,
    description: 'Deprecated copy of x_answered_by (BRIER_LEGACY_EXTENSION_FIELDS=on only).',
  }),
};

export const Answer = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('noul'),
      noul: z.number().openapi({ description: 'P(yes), rounded to 2 decimals.' }),
      x_abstained: Abstained,
      x_answered_by: AnsweredBy,
      ...Legacy,
    }),
    z.object({
      type: z.literal('choice'),
      choice: z.string().openapi({ description: 'The option with the largest (rounded) probability.' }),
      confidence: z.number().openapi({
        description: 'clip((k·pmax − 1)/(k − 1), 0, 1) of the rounded probabilities, rounded to 2 decimals.',
      }),
      probabilities: Probabilities,
      x_abstained: Abstained,
      x_answered_by: AnsweredBy,
      ...Legacy,
    }),
    z.object({
      type: z.literal('score'),
      score: z.number().openapi({ description: 'Expected level Σ i·p_i of the rounded probabilities (exact).' }),
      confidence: z.number().openapi({
        description:
          'max(0, 1 − Σ p_i|i − m| / MADu) of the rounded probabilities, m the most likely level, rounded to 2 decimals.',
      }),
      legend: z.record(z.string(), z.unknown()),
      probabilities: Probabilities,
      x_abstained: Abstained,
      x_answered_by: AnsweredBy,
      ...Legacy,
    }),
  ])
  .openapi('Answer');

export const SystemOneResponse = z
  .object({
    model: z.string().openapi({
      description: "The versioned id of the model that answered (or the adapter's id; see x_answered_by).",
    }),
    answers: z.record(z.string(), Answer),
    usage: z.object({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
  })
  .openapi('SystemOneResponse');

export type WireAnswer = z.infer<typeof Answer>;
export type SystemOneResponse = z.infer<typeof SystemOneResponse>;

export const ModelEntry = z
  .object({
    name: z.string().openapi({ example: 'brier-latest' }),
    id: z.string().openapi({ description: 'Exact versioned id; the major version is the decision model generation.' }),
    description: z.string(),
    release_date: z.string().openapi({ example: '2026-11-22' }),
    context_limit: z.number().int().openapi({ description: 'Max tokens of the state plus all questions.' }),
    input_limit: z.number().int().openapi({ description: 'Max tokens of the state plus the longest question.' }),
    x_calibrated: z.boolean().optional().openapi({
      description:
        'Brier extension. false: a GGUF or upstream model whose probabilities no calibration was fitted for (`brier models calibrate`), answered mixed half and half with the uniform answer (or raw, with BRIER_UNCALIBRATED=raw). true: calibrated per question type, or the embedded model (calibrated by its training).',
    }),
  })
  .openapi('Model');

export const ModelsResponse = z.object({ models: z.array(ModelEntry) }).openapi('ModelList');
export type ModelEntry = z.infer<typeof ModelEntry>;
