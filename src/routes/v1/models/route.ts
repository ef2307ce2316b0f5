import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { DecisionEngine } from '../../../engines/engine.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { ModelsResponse } from './protocol.ts';

export const modelsRoute = createRoute({
  method: 'get',
  path: '/v1/models',
  tags: ['Inference'],
  summary: 'List the hosted model',
  security: [{ bearer: [] }],
  responses: {
    200: {
      description: 'The model this server answers with',
      content: { 'application/json': { schema: ModelsResponse } },
    },
    ...errorResponses(401, 403),
  },
});

/**
 * The served model as /v1/models and the console describe it. Read per request: an upstream engine
 * learns its description and limits when it loads.
 */
export function describeModel(engine: DecisionEngine) {
  return {
    name: 'brier-latest',
    id: engine.info.id,
    description: engine.info.description,
    release_date: engine.info.releaseDate,
    context_limit: engine.limits.contextTokens,
    input_limit: engine.limits.inputTokens,
  };
}

export function registerModels(app: OpenAPIHono<AppEnv>, engine: DecisionEngine): void {
  app.openapi(modelsRoute, (c) => c.json({ models: [describeModel(engine)] }, 200));
}
