import { z } from '@hono/zod-openapi';
import { createDistillation } from '../../../domain/distill-jobs.ts';
import { MAX_ACTIVE_JOBS_PER_ACCOUNT } from '../../../domain/jobs.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import type { WireQuestion } from '../../../systemone/protocol.ts';
import type { TeachDeps } from '../../teach.ts';
import { accountOf } from '../examples/route.ts';
import { TrainingJob } from '../training-jobs/protocol.ts';
import { wireWithOutlook } from '../training-jobs/route.ts';
import { CreateDistillationJob, DISTILL_LIMITS, DistillEstimate } from './protocol.ts';

export const createDistillationJobRoute = defineRoute({
  auth: 'key-or-session',
  // Its questions are System One questions: as large as POST /v1/systemone takes (BRIER_MAX_BODY_BYTES).
  bodyLimit: 'inference',
  method: 'post',
  path: '/distillation-jobs',
  tags: ['Adapters'],
  summary: "Queue a distillation job: learn question templates from a teacher's answers",
  description: `A training job of kind distill: it asks the teacher about the account's states (uploaded unlabelled states, or its retained requests), ${DISTILL_LIMITS.defaultConcurrency} calls at once by default and never more than its budget of calls, retrying the teacher's timeouts, 429s and 5xx with backoff; stores the teacher's distributions as soft labels (apart from labelled examples); fits an adapter on the embedded base by cross-entropy to them, the account's true labels weighted above; holds out 25% of the states and serves a template only where the adapter is closer to the teacher than the base model there. dry_run: true answers the estimate (teacher calls, time) without queuing. Same queue as training jobs (at most ${MAX_ACTIVE_JOBS_PER_ACCOUNT} queued or running per account); GET /control/v1/training-jobs/{id} follows it.`,
  request: { body: { required: true, content: { 'application/json': { schema: CreateDistillationJob } } } },
  responses: {
    200: {
      description: 'dry_run: the estimate, nothing queued',
      content: { 'application/json': { schema: z.object({ estimate: DistillEstimate }).openapi('DistillDryRun') } },
    },
    202: { description: 'Queued', content: { 'application/json': { schema: TrainingJob } } },
    ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422),
  },
});

export function registerDistillationJobs(api: Api, deps: TeachDeps): void {
  api.openapi(createDistillationJobRoute, async (c) => {
    const userId = accountOf(c);
    const body = c.req.valid('json');
    const teacher = deps.teachers.get(body.teacher);
    if (!teacher) {
      const known = deps.teachers.list().map((t) => t.id);
      throw fail(
        'NOT_FOUND',
        `teacher: no teacher ${JSON.stringify(body.teacher)} on this server (${known.length > 0 ? `it offers ${known.join(', ')}` : 'the operator has configured none: BRIER_TEACHERS'}; GET /control/v1/teachers)`,
      );
    }
    const stats = teacher.stats();
    const { estimate, job } = await createDistillation(deps).start(
      userId,
      { id: teacher.id, concurrency: teacher.concurrency, msPerCall: stats.msPerCall },
      {
        questions: Object.values(body.questions) as WireQuestion[],
        source: body.source,
        maxStates: body.max_states,
        budget: body.budget,
        concurrency: body.concurrency,
        humanWeight: body.human_weight ?? deps.humanWeight,
        fallbackThreshold: body.fallback_threshold,
        dryRun: body.dry_run,
      },
    );
    if (!job) return c.json({ estimate }, 200);
    return c.json(await wireWithOutlook(deps, job), 202);
  });
}
