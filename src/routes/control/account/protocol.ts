import { z } from '@hono/zod-openapi';

export const AccountInfo = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    email_verified: z.boolean(),
    created_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('Account');

export const AccountDeleted = z
  .object({
    deleted: z.literal(true),
    revoked_keys: z.number().int().openapi({ description: 'Active keys revoked with the account' }),
  })
  .openapi('AccountDeleted');
