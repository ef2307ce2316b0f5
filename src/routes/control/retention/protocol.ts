import { z } from '@hono/zod-openapi';
import { MAX_RETENTION_DAYS } from '../../../domain/retention.ts';

export const RetentionPolicy = z
  .object({
    account_days: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Days every key's requests are kept, or null: off (the default)." }),
    keys: z
      .array(z.object({ key_id: z.string(), days: z.number().int() }))
      .openapi({ description: "Keys with their own period, which takes precedence over the account's." }),
    max_days: z.number().int().openapi({ example: MAX_RETENTION_DAYS }),
    retained: z.number().int().openapi({ description: 'Requests kept now (not expired).' }),
  })
  .openapi('RetentionPolicy');

export const SetRetention = z
  .object({
    days: z
      .number()
      .int()
      .min(0)
      .max(MAX_RETENTION_DAYS, `at most ${MAX_RETENTION_DAYS} days (the limit)`)
      .openapi({
        description: `1 to ${MAX_RETENTION_DAYS}: keep request content this many days; 0: off (and delete what was kept).`,
      }),
    key_id: z.string().min(1).max(100).optional().openapi({
      description:
        'One key of the account (with a bearer key: only that key itself); absent: the account (with a bearer key: that key).',
    }),
  })
  .strict()
  .openapi('SetRetention');
