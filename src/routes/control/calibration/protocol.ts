import { z } from '@hono/zod-openapi';
import { integerQuery } from '../../../http/params.ts';
import { ReliabilityBin } from '../training-jobs/protocol.ts';

const Metrics = z
  .object({
    n: z.number().int(),
    accuracy: z.number(),
    brier: z.number(),
    ece: z.number(),
    ece_floor: z
      .number()
      .openapi({ description: 'The ECE a perfectly calibrated model shows by chance at these confidences and n.' }),
  })
  .openapi('OutcomeMetrics');

export const TemplateCalibration = z
  .object({
    template: z.string(),
    type: z.string(),
    question: z.record(z.string(), z.unknown()),
    overall: Metrics,
    reliability: z.array(ReliabilityBin),
    weekly: z.array(
      Metrics.extend({ week: z.string().openapi({ description: 'Monday (UTC) of the week, YYYY-MM-DD.' }) }),
    ),
    recent: Metrics.nullable().openapi({
      description: 'The most recent outcomes (the drift window), once there are enough.',
    }),
    drifted: z.boolean(),
    reason: z.string(),
    served_by: z
      .array(z.string())
      .openapi({ description: 'The models (base or adapters) whose answers these outcomes score.' }),
  })
  .openapi('TemplateCalibration');

export const CalibrationReport = z
  .object({
    days: z.number().int(),
    drift: z
      .object({ window: z.number().int(), min_outcomes: z.number().int(), ece: z.number(), floor_factor: z.number() })
      .openapi({
        description:
          'A template has drifted when its last `window` outcomes (at least `min_outcomes`) have an ECE above both `ece` and `floor_factor` times their chance floor.',
      }),
    templates: z.array(TemplateCalibration),
  })
  .openapi('CalibrationReport');

export const CalibrationQuery = z.object({
  days: integerQuery(
    'days',
    { min: 1, max: 366, fallback: 90 },
    'Window of outcomes in UTC days (1 to 366, default 90)',
  ),
});
