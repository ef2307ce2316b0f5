import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { DecisionEngine } from '../../../engines/engine.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { describeModel } from '../../../systemone/models.ts';
import { ModelsResponse } from '../../../systemone/protocol.ts';

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
  app.openapi(modelsRoute, (c) => c.json({ models: [describeModel(engine)] }, 200));
}
