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

export function registerModels(app: OpenAPIHono<AppEnv>, engine: DecisionEngine): void {
  // Read per request: an upstream engine learns its description and limits when it loads.
  app.openapi(modelsRoute, (c) =>
    c.json(
      {
        models: [
          {
            name: 'brier-latest',
            id: engine.info.id,
            description: engine.info.description,
            release_date: engine.info.releaseDate,
            context_limit: engine.limits.contextTokens,
            input_limit: engine.limits.inputTokens,
          },
        ],
      },
      200,
    ),
  );
}
