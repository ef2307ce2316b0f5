import { z } from '@hono/zod-openapi';
import { Question, QuestionId } from '../../../systemone/protocol.ts';

/** Bounds of a distillation job's request (documented). */
export const DISTILL_LIMITS = {
  maxQuestions: 16,
  minStates: 20,
  maxStates: 20_000,
  defaultMaxStates: 2_000,
  maxBudget: 100_000,
  maxConcurrency: 16,
  defaultConcurrency: 4,
} as const;

export const CreateDistillationJob = z
  .object({
    teacher: z
      .string()
      .min(1)
      .max(64)
      .openapi({ description: 'A teacher id of GET /control/v1/teachers.', example: 'jev' }),
    questions: z
      .record(QuestionId, Question)
      .refine((q) => Object.keys(q).length >= 1, 'at least one question is required')
      .refine(
        (q) => Object.keys(q).length <= DISTILL_LIMITS.maxQuestions,
        `at most ${DISTILL_LIMITS.maxQuestions} questions (the limit)`,
      )
      .openapi({ description: 'The question templates to learn, in System One form (ids are yours).' }),
    source: z.enum(['states', 'retained']).default('states').openapi({
      description:
        "states: the account's uploaded unlabelled states (POST /control/v1/states); retained: the states of its retained requests.",
    }),
    max_states: z
      .number()
      .int()
      .min(DISTILL_LIMITS.minStates)
      .max(DISTILL_LIMITS.maxStates)
      .default(DISTILL_LIMITS.defaultMaxStates)
      .openapi({ description: 'States read at most (the newest).' }),
    budget: z.number().int().min(1).max(DISTILL_LIMITS.maxBudget).optional().openapi({
      description:
        'Teacher calls the job may make at most (one call per state, asking every template it has no soft label for). Default: the estimate.',
    }),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(DISTILL_LIMITS.maxConcurrency)
      .default(DISTILL_LIMITS.defaultConcurrency)
      .openapi({ description: "Teacher calls at once (also bounded by the teacher's own concurrency)." }),
    human_weight: z.number().min(0).max(100).optional().openapi({
      description:
        "Weight of the account's true labels of these templates in the fit, against 1 for the teacher's (default 3).",
    }),
    fallback_threshold: z.number().min(0).max(1).nullable().default(null).openapi({
      description:
        "Opt-in: the adapter's answers with a confidence under this go to the teacher instead (x_answered_by says which answered). null: never.",
    }),
    dry_run: z.boolean().default(false).openapi({
      description: 'true: nothing is queued; the answer is the estimate (states, teacher calls, time).',
    }),
  })
  .strict()
  .openapi('CreateDistillationJob');

export const DistillEstimate = z
  .object({
    teacher: z.string(),
    templates: z.number().int(),
    states: z.number().int().openapi({ description: 'States the job reads.' }),
    already_labelled: z
      .number()
      .int()
      .openapi({ description: 'Of them, labelled by this teacher for every template.' }),
    teacher_calls: z.number().int().openapi({ description: 'Calls the job will make: the budget, or fewer.' }),
    budget: z.number().int(),
    teacher_questions: z
      .number()
      .int()
      .openapi({ description: 'Questions those calls ask, at most (calls x templates).' }),
    estimated_seconds: z.number().int().nullable().openapi({
      description:
        "From the teacher's measured time per call and the job's concurrency; null before a call was measured.",
    }),
  })
  .openapi('DistillEstimate');
