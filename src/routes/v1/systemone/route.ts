import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { SystemOneRequest, SystemOneResponse } from '../../../systemone/protocol.ts';
import type { SystemOne } from '../../../systemone/serve.ts';

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

export function registerSystemOne(app: OpenAPIHono<AppEnv>, systemOne: SystemOne): void {
  app.openapi(systemOneRoute, async (c) => {
    const { response, consumed } = await systemOne.serve(c.req.valid('json'), c.req.raw.signal);
    c.set('metered', consumed);
    return c.json(response, 200);
  });
}
