import type { DecisionEngine } from '../../../engines/engine.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import type { AdapterResolver } from '../../../systemone/adapters.ts';
import { describeAdapter, describeModel } from '../../../systemone/models.ts';
import { ModelsResponse } from '../../../systemone/protocol.ts';

export const modelsRoute = defineRoute({
  auth: 'key',
  method: 'get',
  path: '/models',
  tags: ['Inference'],
  summary: "List the hosted model, and the key's account's adapters",
  description:
    "The base model first; then the adapters of the key's account that this server can serve (each a model id for POST /v1/systemone). Another account's adapters are never listed.",
  responses: {
    200: {
      description: 'The model this server answers with',
      content: { 'application/json': { schema: ModelsResponse } },
    },
    ...errorResponses(401, 403),
  },
});

export function registerModels(api: Api, engine: DecisionEngine, adapters?: AdapterResolver): void {
  api.openapi(modelsRoute, async (c) => {
    const owner = c.get('owner');
    const own = owner && adapters ? await adapters.list(owner.userId) : [];
    return c.json({ models: [describeModel(engine), ...own.map((a) => describeAdapter(engine, a))] }, 200);
  });
}
