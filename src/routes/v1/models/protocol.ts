import { z } from '@hono/zod-openapi';

export const ModelEntry = z
  .object({
    name: z.string().openapi({ example: 'brier-latest' }),
    id: z.string().openapi({ description: 'Exact versioned id; the major version is the decision model generation.' }),
    description: z.string(),
    release_date: z.string().openapi({ example: '2026-11-22' }),
    context_limit: z.number().int().openapi({ description: 'Max tokens of the state plus all questions.' }),
    input_limit: z.number().int().openapi({ description: 'Max tokens of the state plus the longest question.' }),
  })
  .openapi('Model');

export const ModelsResponse = z.object({ models: z.array(ModelEntry) }).openapi('ModelList');
