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
    return c.json({ ...describeModel(deps.engine), card: await card }, 200);
  });
}
