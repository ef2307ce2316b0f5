import { z } from '@hono/zod-openapi';
import type { DistillSpec } from '../../../domain/distill.ts';
import { stateHash } from '../../../domain/distill.ts';
import { MAX_ACTIVE_JOBS_PER_ACCOUNT } from '../../../domain/jobs.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import type { WireQuestion } from '../../../systemone/protocol.ts';
import { templateOf } from '../../../systemone/templates.ts';
import type { TeachDeps } from '../../teach.ts';
import { accountOf } from '../examples/route.ts';
import { TrainingJob } from '../training-jobs/protocol.ts';
import { wireJob } from '../training-jobs/route.ts';
import { CreateDistillationJob, DISTILL_LIMITS, DistillEstimate } from './protocol.ts';

export const createDistillationJobRoute = defineRoute({
  auth: 'key-or-session',
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
    const templates = new Map<string, { question: WireQuestion; canonical: string; type: string }>();
    for (const q of Object.values(body.questions) as WireQuestion[]) {
      const t = templateOf(q);
      templates.set(t.id, { question: q, canonical: t.canonical, type: t.type });
    }
    const ids = [...templates.keys()];
    const states =
      body.source === 'states'
        ? await deps.distill.states(userId, body.max_states)
        : await deps.distill.retainedStates(userId, body.max_states);
    if (states.length < DISTILL_LIMITS.minStates) {
      throw fail(
        'BAD_REQUEST',
        body.source === 'states'
          ? `source: this account has ${states.length} unlabelled states, at least ${DISTILL_LIMITS.minStates} are needed; upload some (POST /control/v1/states)`
          : `source: this account has ${states.length} retained requests, at least ${DISTILL_LIMITS.minStates} are needed; turn retention on (PUT /control/v1/retention) or upload states`,
      );
    }
    const have = await deps.distill.labelled(userId, teacher.id, ids);
    const needing = states.filter((s) => {
      const h = stateHash(s);
      return ids.some((id) => !have.get(id)?.has(h));
    }).length;
    const budget = body.budget ?? needing;
    const calls = Math.min(budget, needing);
    const ms = teacher.stats().msPerCall;
    const estimate = {
      teacher: teacher.id,
      templates: ids.length,
      states: states.length,
      already_labelled: states.length - needing,
      teacher_calls: calls,
      budget,
      teacher_questions: calls * ids.length,
      estimated_seconds:
        ms === null
          ? null
          : Math.round((calls * ms) / 1000 / Math.max(1, Math.min(body.concurrency, teacher.concurrency))),
    };
    if (body.dry_run) return c.json({ estimate }, 200);
    await deps.adapters.checkRoom(userId);
    await deps.examples.ensureTemplates(
      userId,
      [...templates].map(([templateId, t]) => ({ templateId, type: t.type, question: t.canonical })),
    );
    const spec: DistillSpec & { estimate: typeof estimate } = {
      teacher: teacher.id,
      questions: Object.fromEntries([...templates].map(([id, t]) => [id, t.canonical])),
      source: body.source,
      maxStates: body.max_states,
      budget,
      concurrency: body.concurrency,
      humanWeight: body.human_weight ?? deps.humanWeight,
      fallbackThreshold: body.fallback_threshold,
      estimate,
    };
    const job = await deps.jobs.enqueue(userId, ids, states.length, { spec });
    return c.json(wireJob(job, await deps.jobs.outlook(job)), 202);
  });
}
