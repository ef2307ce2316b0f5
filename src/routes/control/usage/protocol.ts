import { z } from '@hono/zod-openapi';
import { USAGE_DEFAULT_DAYS, USAGE_MAX_DAYS } from '../../../domain/usage-report.ts';
import { integerQuery } from '../../../http/params.ts';

export const UsageQuery = z.object({
  days: integerQuery(
    'days',
    { min: 1, max: USAGE_MAX_DAYS, fallback: USAGE_DEFAULT_DAYS },
    `Window in UTC days, today included (1 to ${USAGE_MAX_DAYS}, default ${USAGE_DEFAULT_DAYS})`,
  ),
});

const Counts = {
  requests: z.number().int().openapi({ description: 'Requests made with the key(s), errors included' }),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  questions: z.number().int().openapi({ description: 'Questions answered' }),
  errors: z.number().int().openapi({ description: 'Requests answered with a status of 400 or more' }),
  teacher_calls: z.number().int().openapi({
    description:
      "Calls made to a teacher, counted apart from the model's work: by adapters' fallback (one per request that asked it) and, in an account's totals and in `jobs`, every call a distillation job sent (answered, failed, or cut off by a stop or a delete)",
  }),
};

export const UsageCounts = z.object(Counts).openapi('UsageCounts');
export const UsageDay = z
  .object({ date: z.string().openapi({ example: '2025-01-31', description: 'UTC day' }), ...Counts })
  .openapi('UsageDay');

export const KeyUsage = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    revoked: z.boolean(),
    totals: UsageCounts,
    daily: z.array(UsageDay).openapi({ description: 'One entry per day of the window, oldest first, zero-filled' }),
  })
  .openapi('KeyUsage');

export const JobUsage = z
  .object({
    id: z.string().openapi({ description: 'The distillation job (GET /control/v1/training-jobs/{id})' }),
    teacher: z.string().openapi({ description: 'The teacher it asked' }),
    totals: UsageCounts.openapi({
      description: 'Its teacher calls in the window (the other counts are 0: not requests)',
    }),
    daily: z.array(UsageDay).openapi({ description: 'One entry per day of the window, oldest first, zero-filled' }),
  })
  .openapi('JobUsage');

export const UsageReport = z
  .object({
    window: z.object({
      days: z.number().int(),
      from: z.string().openapi({ example: '2025-01-02' }),
      to: z.string().openapi({ example: '2025-01-31' }),
    }),
    totals: UsageCounts.openapi({
      description:
        "With a session: every key of the account in the window, revoked keys included, and its distillation jobs' teacher calls. With an API key: that key.",
    }),
    daily: z.array(UsageDay).openapi({ description: 'The totals by day, oldest first, zero-filled' }),
    keys: z.array(KeyUsage).openapi({
      description: "With a session: the account's active keys. With an API key: that key alone.",
    }),
    jobs: z.array(JobUsage).openapi({
      description:
        "The account's distillation jobs that called their teacher in the window, the first to call first (with an API key too; a key's totals do not count them, the account's do)",
    }),
  })
  .openapi('UsageReport');
