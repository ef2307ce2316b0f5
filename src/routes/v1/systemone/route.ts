import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { DecideOutput, DecisionService } from '../../../domain/decisions.ts';
import type { Json } from '../../../domain/questions.ts';
import type { WireQuestion, WireState } from '../../../domain/systemone.ts';
import type { AppEnv, Metered } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { SystemOneRequest, SystemOneResponse } from './protocol.ts';

export const systemOneRoute = createRoute({
  method: 'post',
  path: '/v1/systemone',
  tags: ['Inference'],
  summary: 'Answer typed questions about one state',
  description:
    'Answers every question (noul, choice, score) with probabilities in one pass over the state. Probabilities, scores and confidences are rounded to 2 decimals; each distribution sums to 1 before rounding.',
  security: [{ bearer: [] }],
  request: { body: { required: true, content: { 'application/json': { schema: SystemOneRequest } } } },
  responses: {
    200: {
      description: 'Answers keyed by question id',
      content: { 'application/json': { schema: SystemOneResponse } },
    },
    ...errorResponses(400, 401, 403, 413, 415, 422, 503),
  },
});

/** Answers a validated body; shared by /v1/systemone and the console playground. */
export async function decideBody(
  decisions: DecisionService,
  body: SystemOneRequest,
  signal: AbortSignal,
): Promise<{ out: DecideOutput; metered: Metered }> {
  const out = await decisions.decide(
    {
      model: body.model,
      // The schema admits exactly the JSON shapes these types describe.
      state: body.state as WireState,
      questions: body.questions as Record<string, WireQuestion & { instructions?: Json }>,
    },
    signal,
  );
  const metered = {
    model: out.model,
    questions: Object.keys(out.answers).length,
    inputTokens: out.usage.input_tokens,
    outputTokens: out.usage.output_tokens,
  };
  return { out, metered };
}

export function registerSystemOne(app: OpenAPIHono<AppEnv>, decisions: DecisionService): void {
  app.openapi(systemOneRoute, async (c) => {
    const { out, metered } = await decideBody(decisions, c.req.valid('json'), c.req.raw.signal);
    c.set('metered', metered);
    return c.json(out, 200);
  });
}
