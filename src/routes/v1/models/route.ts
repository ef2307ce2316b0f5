import type { DecisionEngine } from '../../../engines/engine.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { describeModel } from '../../../systemone/models.ts';
import { ModelsResponse } from '../../../systemone/protocol.ts';

export const modelsRoute = defineRoute({
  auth: 'key',
  method: 'get',
  path: '/models',
  tags: ['Inference'],
  summary: 'List the hosted model',
  responses: {
    200: {
      description: 'The model this server answers with',
      content: { 'application/json': { schema: ModelsResponse } },
    },
    ...errorResponses(401, 403),
  },
});

export function registerModels(api: Api, engine: DecisionEngine): void {
  api.openapi(modelsRoute, (c) => c.json({ models: [describeModel(engine)] }, 200));
}
