import { z } from '@hono/zod-openapi';
import { readModelCard } from '../../../engines/embedded/artifacts.ts';
import type { DecisionEngine } from '../../../engines/engine.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { describeModel } from '../../../systemone/models.ts';

const Metrics = z.object({
  n: z.number(),
  accuracy: z.number().nullable(),
  brier: z.number().nullable(),
  ece: z.number().nullable(),
});
export const Comparison = z.object({ model: Metrics, prior: Metrics.nullable(), uniform: Metrics.nullable() });

const CalibrationMetrics = z.object({
  n: z.number().int(),
  accuracy: z.number(),
  brier: z.number(),
  nll: z.number(),
  ece: z.number(),
  ece_floor: z.number(),
});

export const ModelCalibration = z
  .object({
    calibrated: z.boolean().openapi({ description: 'Every question type has a fitted calibration.' }),
    mode: z.enum(['fitted', 'shrink', 'raw']).openapi({
      description:
        'fitted: from `brier models calibrate`; shrink: none fitted, answers mixed half and half with the uniform answer; raw: none fitted, answers as the model gives them (BRIER_UNCALIBRATED=raw).',
    }),
    key: z
      .string()
      .openapi({ description: "The calibration file's key (gguf-<sha256 of the file>, or the server's)." }),
    types: z.record(z.string(), z.object({ temperature: z.number(), alpha: z.number() }).nullable()),
    fitted_at: z.string().nullable(),
    data: z.object({ source: z.string(), name: z.string(), sha256: z.string(), rows: z.number().int() }).nullable(),
    report: z.array(
      z.object({
        type: z.string(),
        set: z.string().nullable(),
        n: z.number().int(),
        uniform_brier: z.number(),
        before: CalibrationMetrics,
        after: CalibrationMetrics,
        held_out: CalibrationMetrics.nullable(),
      }),
    ),
  })
  .openapi('ModelCalibration');

export const ConsoleModel = z
  .object({
    name: z.string(),
    id: z.string(),
    description: z.string(),
    release_date: z.string(),
    context_limit: z.number().int(),
    input_limit: z.number().int(),
    card: z
      .object({
        title: z.string(),
        markdown: z.string(),
        /** Per question type: in-distribution ("seen") rows and tasks never trained on ("unseen"). */
        evaluation: z.record(z.string(), z.object({ seen: Comparison.nullable(), unseen: Comparison.nullable() })),
      })
      .nullable()
      .openapi({ description: 'The model card of the shipped model, when this server has one; null otherwise.' }),
    calibration: ModelCalibration.nullable().openapi({
      description:
        'The calibration of a GGUF or upstream model, with before/after per question type and source set; null for a model calibrated by its training (the embedded model).',
    }),
  })
  .openapi('ConsoleModel');

export const consoleModelRoute = defineRoute({
  auth: 'session',
  method: 'get',
  path: '/model',
  tags: ['Console'],
  summary: 'The served model, its limits and its model card (console session)',
  responses: {
    200: { description: 'The model', content: { 'application/json': { schema: ConsoleModel } } },
    ...errorResponses(401, 403),
  },
});

export function registerConsoleModel(
  api: Api,
  deps: { engine: DecisionEngine; modelCardDir?: string | undefined },
): void {
  let card: Promise<Awaited<ReturnType<typeof readModelCard>>> | undefined;
  api.openapi(consoleModelRoute, async (c) => {
    card ??= deps.modelCardDir ? readModelCard(deps.modelCardDir) : Promise.resolve(null);
    const cal = deps.engine.calibration;
    const calibration = cal
      ? {
          calibrated: cal.calibrated,
          mode: cal.mode,
          key: cal.key,
          types: cal.types,
          fitted_at: cal.file?.fitted_at ?? null,
          data: cal.file?.data ?? null,
          report: cal.file?.report ?? [],
        }
      : null;
    return c.json({ ...describeModel(deps.engine), card: await card, calibration }, 200);
  });
}
