import { z } from '@hono/zod-openapi';

export const OutcomeRequest = z
  .object({
    request_id: z
      .string()
      .min(1)
      .max(64)
      .openapi({ example: 'req_0f3c9a...', description: 'The x-request-id of the /v1/systemone response.' }),
    question_id: z.string().min(1).max(128).openapi({ example: 'team' }),
    label: z.union([z.boolean(), z.string().max(1000), z.number()]).openapi({
      description: 'What turned out true: noul true/false, choice a label, score a level index (or its text).',
    }),
  })
  .strict()
  .openapi('Outcome');

export const RecordedOutcome = z
  .object({
    example_id: z.string(),
    template_id: z.string(),
    label: z.string().openapi({ description: 'The label as stored (noul "true"/"false", score the level index).' }),
    replaced: z.boolean().openapi({ description: 'An earlier outcome of this request and question was corrected.' }),
  })
  .openapi('RecordedOutcome');
