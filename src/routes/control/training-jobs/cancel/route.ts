import { type Api, defineRoute } from '../../../../http/api.ts';
import { errorResponses } from '../../../../http/errors.ts';
import type { TeachDeps } from '../../../teach.ts';
import { accountOf } from '../../examples/route.ts';
import { JobIdParam, TrainingJob } from '../protocol.ts';
import { wireJob } from '../route.ts';

export const cancelJobRoute = defineRoute({
  auth: 'key-or-session',
  method: 'post',
  path: '/training-jobs/{id}/cancel',
  tags: ['Adapters'],
  summary: 'Cancel a queued or running training job',
  description:
    'A queued job is cancelled at once; a running one stops within a few seconds (at its next lease renewal) and stores no adapter, whichever stage it is in. 409 once the job has ended.',
  request: { params: JobIdParam },
  responses: {
    200: { description: 'The cancelled job', content: { 'application/json': { schema: TrainingJob } } },
    ...errorResponses(401, 403, 404, 409),
  },
});

export function registerCancelJob(api: Api, deps: TeachDeps): void {
  api.openapi(cancelJobRoute, async (c) => {
    const { id } = c.req.valid('param');
    return c.json(wireJob(await deps.jobs.cancel(accountOf(c), id)), 200);
  });
}
