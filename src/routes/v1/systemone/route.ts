import type { Retention } from '../../../domain/retention.ts';
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
    'Answers every question (noul, choice, score) with probabilities in one pass over the state. Each distribution is rounded to hundredths that sum to exactly 1; choice, score and confidence agree with the rounded numbers. Every invalid body is a 422 with a FastAPI-style detail list (a duplicate key included); an unknown model or a request over the token limits is a 400. Brier extensions start with x_.',
  request: { body: { required: true, content: { 'application/json': { schema: SystemOneRequest } } } },
  responses: {
    200: {
      description: 'Answers keyed by question id',
      content: { 'application/json': { schema: SystemOneResponse } },
    },
    ...errorResponses(400, 401, 403, 413, 415, 422, 503),
  },
});

/** Response header: the days this request's content is kept (present only when retention is on). */
export const RETAINED_HEADER = 'x-brier-retained-days';

export function registerSystemOne(
  api: Api,
  deps: { systemOne: SystemOne; usage: UsageRecorder; retention?: Retention | undefined },
): void {
  // Metered before the body is read, so that refusals of the body (413, 415, 422) are counted too.
  const before = [usageMeter(deps.usage, SYSTEMONE_PATH)];
  api.openapi(
    systemOneRoute,
    async (c) => {
      const body = c.req.valid('json');
      const owner = c.get('owner');
      const { response, consumed } = await deps.systemOne.serve(body, c.req.raw.signal, { account: owner?.userId });
      c.set('metered', consumed);
      const headers: Record<string, string> = {};
      const abstained = abstainedHeader(response);
      if (abstained) headers[ABSTAINED_HEADER] = abstained;
      // Opt-in only: without a retention period for the key or its account nothing of the request is kept.
      const days = owner && deps.retention ? await deps.retention.daysFor(owner.userId, owner.keyId) : null;
      if (owner && deps.retention && days !== null) {
        await deps.retention.keep(
          owner.userId,
          {
            requestId: c.get('requestId'),
            keyId: owner.keyId,
            model: response.model,
            state: JSON.stringify(body.state),
            questions: JSON.stringify(body.questions),
            answers: JSON.stringify(response.answers),
          },
          days,
        );
        headers[RETAINED_HEADER] = String(days);
      }
      return c.json(response, 200, headers);
    },
    { before },
  );
}
