import { z } from '@hono/zod-openapi';

export const CreateKeyRequest = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .openapi({ example: 'production', description: 'A label, 1 to 64 characters' }),
  })
  .openapi('CreateKeyRequest');

export const KeyListing = z
  .object({
    id: z.string().openapi({ example: 'key_0f3c...' }),
    name: z.string(),
    prefix: z.string().openapi({ example: 'brier_sk_AbC123', description: 'The first characters of the key' }),
    created_at: z.string().openapi({ format: 'date-time' }),
    last_used_at: z.string().nullable().openapi({ format: 'date-time' }),
  })
  .openapi('ApiKey');

export const CreatedKey = KeyListing.extend({
  key: z.string().openapi({ description: 'The API key itself. Shown once: it is stored only as a hash.' }),
}).openapi('CreatedApiKey');

export const KeyList = z.object({ data: z.array(KeyListing) }).openapi('ApiKeyList');

export const KeyIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(100)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'key_0f3c...' }),
});
