import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { DecisionEngine } from '../../../engines/engine.ts';
import type { AppEnv } from '../../../http/env.ts';
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

export const consoleModelRoute = createRoute({
  method: 'get',
  path: '/control/v1/model',
  tags: ['Console'],
  summary: 'The served model, its limits and its model card (console session)',
  security: [{ session: [] }],
  responses: {
    200: { description: 'The model', content: { 'application/json': { schema: ConsoleModel } } },
    ...errorResponses(401, 403),
  },
});

type MetricsT = z.infer<typeof Metrics>;

function metrics(value: unknown): MetricsT | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  return { n: num(v.n) ?? 0, accuracy: num(v.accuracy), brier: num(v.brier), ece: num(v.ece) };
}

function comparison(value: unknown): z.infer<typeof Comparison> | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const model = metrics(v.model);
  return model ? { model, prior: metrics(v.prior), uniform: metrics(v.uniform) } : null;
}

/** Reads MODEL_CARD.md and report.json from `dir`; null when there is no card. */
export async function readModelCard(dir: string) {
  let markdown: string;
  try {
    markdown = await readFile(path.join(dir, 'MODEL_CARD.md'), 'utf8');
  } catch {
    return null;
  }
  const title = (/^#\s+(.+)$/m.exec(markdown)?.[1] ?? 'Model card').trim();
  const evaluation: Record<
    string,
    { seen: z.infer<typeof Comparison> | null; unseen: z.infer<typeof Comparison> | null }
  > = {};
  try {
    const report = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8')) as Record<string, unknown>;
    // in distribution: every row of the training tasks, cross-validated (older reports: the held-out 20%)
    const seen = (report.seenAllRowsCrossValidated ?? report.seen ?? {}) as Record<string, unknown>;
    const unseen = (report.heldOutTasksShipped ?? report.leaveTasksOut ?? {}) as Record<string, unknown>;
    for (const type of ['noul', 'choice', 'score']) {
      evaluation[type] = { seen: comparison(seen[type]), unseen: comparison(unseen[type]) };
    }
  } catch {
    // A card without numbers is still a card.
  }
  return { title, markdown, evaluation };
}

export function registerConsoleModel(
  app: OpenAPIHono<AppEnv>,
  deps: { engine: DecisionEngine; modelCardDir?: string | undefined },
): void {
  let card: Promise<Awaited<ReturnType<typeof readModelCard>>> | undefined;
  app.openapi(consoleModelRoute, async (c) => {
    card ??= deps.modelCardDir ? readModelCard(deps.modelCardDir) : Promise.resolve(null);
    return c.json({ ...describeModel(deps.engine), card: await card }, 200);
  });
}
