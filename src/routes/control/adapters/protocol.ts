import { z } from '@hono/zod-openapi';
import { TemplateReport } from '../training-jobs/protocol.ts';

export const AdapterSummary = z
  .object({
    id: z.string().openapi({
      example: 'ft:brier-lite-4.2.0:3f9a1c2b7d4e',
      description: 'The model id to name in POST /v1/systemone.',
    }),
    base_model: z.string(),
    servable: z.boolean().openapi({
      description: 'This server runs its base model (an adapter serves only on the model it was fitted on).',
    }),
    retrain: z.string().nullable().openapi({
      description:
        'Why it does not serve and what to do, where its base model is not the one served (e.g. fitted on an earlier release); null where it serves.',
    }),
    job_id: z.string(),
    teacher: z
      .string()
      .nullable()
      .openapi({ description: 'Distilled adapters: the teacher they learnt from; null otherwise.' }),
    fallback: z
      .object({
        teacher: z.string(),
        threshold: z.number(),
        available: z.boolean().openapi({
          description:
            'Whether this server has the teacher. false: it was removed from BRIER_TEACHERS since; the adapter answers every question itself, and the server logs it at start and at the first such request.',
        }),
      })
      .nullable()
      .openapi({
        description:
          'Opt-in: answers of the adapter with a confidence under `threshold` are asked of `teacher` instead (x_answered_by: teacher:<id>); null: off.',
      }),
    created_at: z.string().openapi({ format: 'date-time' }),
    templates: z
      .array(TemplateReport)
      .openapi({ description: 'Every template of its job, served or not, with held-out metrics.' }),
  })
  .openapi('Adapter');

export const AdapterList = z.object({ data: z.array(AdapterSummary) }).openapi('AdapterList');

export const AdapterIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'ft:brier-lite-4.2.0:3f9a1c2b7d4e' }),
});

export const SetFallback = z
  .object({
    threshold: z.number().min(0).max(1).nullable().openapi({
      description:
        "Confidence under which an answer of the adapter goes to the teacher (choice and score: the answer's confidence; noul: |2p - 1|); null turns the fallback off.",
    }),
    teacher: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .openapi({ description: 'Default: the teacher the adapter learnt from.' }),
  })
  .strict()
  .openapi('SetFallback');
