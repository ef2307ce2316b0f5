import type { UsageRecorder } from '../../../domain/usage.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { usageMeter } from '../../../http/middleware/usage-meter.ts';
import { SystemOneRequest, SystemOneResponse } from '../../../systemone/protocol.ts';
import { ABSTAINED_HEADER, abstainedHeader, type SystemOne } from '../../../systemone/serve.ts';

export const SYSTEMONE_PATH = '/v1/systemone';

export const systemOneRoute = defineRoute({
  auth: 'key',
  method: 'post',
  path: '/systemone',
  tags: ['Inference'],
  summary: 'Answer typed questions about one state',
  description:
    'Answers every question (noul, choice, score) with probabilities in one pass over the state. Probabilities, scores and confidences are rounded to 2 decimals; each distribution sums to 1 before rounding.',
  request: { body: { required: true, content: { 'application/json': { schema: SystemOneRequest } } } },
  responses: {
    200: {
      description: 'Answers keyed by question id',
      content: { 'application/json': { schema: SystemOneResponse } },
    },
    ...errorResponses(400, 401, 403, 413, 415, 422, 503),
  },
});

export function registerSystemOne(api: Api, deps: { systemOne: SystemOne; usage: UsageRecorder }): void {
  // Metered before the body is read, so that refusals of the body (413, 415, 400) are counted too.
  const before = [usageMeter(deps.usage, SYSTEMONE_PATH)];
  api.openapi(
    systemOneRoute,
    async (c) => {
      const { response, consumed } = await deps.systemOne.serve(c.req.valid('json'), c.req.raw.signal);
      c.set('metered', consumed);
      const abstained = abstainedHeader(response);
      return c.json(response, 200, abstained ? { [ABSTAINED_HEADER]: abstained } : {});
    },
    { before },
  );
}
