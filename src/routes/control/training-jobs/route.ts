import type { z } from '@hono/zod-openapi';
import type { DistillSpec } from '../../../domain/distill.ts';
import { type Job, type JobOutlook, MAX_ACTIVE_JOBS_PER_ACCOUNT, type TeacherTiming } from '../../../domain/jobs.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import type { TeachDeps } from '../../teach.ts';
import { accountOf } from '../examples/route.ts';
import { CreateTrainingJob, JobIdParam, TrainingJob, TrainingJobList } from './protocol.ts';

export const createJobRoute = defineRoute({
  auth: 'key-or-session',
  method: 'post',
  path: '/training-jobs',
  tags: ['Adapters'],
  summary: 'Queue a training job: fit an adapter from the labelled examples',
  description: `Fits, per question template with at least 20 labelled examples, a head on the base model (a probe on the state embedding with the embedded model; a calibration elsewhere), holding out 25% of the examples to measure it. Jobs run in the background, accounts in turn and each account's oldest first, one at a time per account (at most ${MAX_ACTIVE_JOBS_PER_ACCOUNT} queued or running per account), several at once per server where cores allow (BRIER_TRAINING_CONCURRENCY); they wait for the model and survive restarts. A job reads at most BRIER_TRAINING_MAX_EXAMPLES examples (the newest). The body is optional.`,
  request: { body: { required: false, content: { 'application/json': { schema: CreateTrainingJob } } } },
  responses: {
    202: { description: 'Queued', content: { 'application/json': { schema: TrainingJob } } },
    ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422),
  },
});

export const listJobsRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/training-jobs',
  tags: ['Adapters'],
  summary: "The account's training jobs, newest first (the last 20)",
  responses: {
    200: { description: 'Jobs', content: { 'application/json': { schema: TrainingJobList } } },
    ...errorResponses(401, 403),
  },
});

export const getJobRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/training-jobs/{id}',
  tags: ['Adapters'],
  summary: 'One training job: its progress, queue position and estimate, and when done its held-out report',
  request: { params: JobIdParam },
  responses: {
    200: { description: 'The job', content: { 'application/json': { schema: TrainingJob } } },
    ...errorResponses(401, 403, 404),
  },
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A distillation job's spec on the wire (null for other jobs). */
function distillOf(j: Job) {
  if (j.kind !== 'distill' || !j.spec) return null;
  const s = j.spec as DistillSpec & { estimate?: unknown };
  return {
    teacher: s.teacher,
    source: s.source,
    budget: s.budget,
    concurrency: s.concurrency,
    human_weight: s.humanWeight,
    fallback_threshold: s.fallbackThreshold,
    estimate: s.estimate,
  };
}

/** A job on the wire with its outlook: a distillation job's teacher timed as measured now, if not at its start. */
export async function wireWithOutlook(deps: TeachDeps, j: Job) {
  const timing: TeacherTiming = (id) => {
    const teacher = deps.teachers.get(id);
    return teacher && { msPerCall: teacher.stats().msPerCall, concurrency: teacher.concurrency };
  };
  return wireJob(j, await deps.jobs.outlook(j, timing));
}

/** A job on the wire, with its queue position and estimate while it is queued or running. */
export function wireJob(j: Job, outlook: JobOutlook = { position: null, seconds: null, examplesPerSecond: null }) {
  return {
    id: j.id,
    status: j.status,
    progress: j.progress,
    stage: j.stage,
    message: j.message,
    templates: j.templates,
    adapter_id: j.adapterId,
    attempts: j.attempts,
    examples: j.examples,
    kind: j.kind,
    teacher_calls: j.teacherCalls,
    distill: distillOf(j),
    queue_position: outlook.position,
    estimated_seconds: outlook.seconds,
    not_before: j.status === 'queued' ? iso(j.notBefore) : null,
    created_at: new Date(j.createdAt).toISOString(),
    started_at: iso(j.startedAt),
    finished_at: iso(j.finishedAt),
    result: j.result as z.infer<typeof TrainingJob>['result'],
  };
}

export function registerTrainingJobs(api: Api, deps: TeachDeps): void {
  api.openapi(createJobRoute, async (c) => {
    const userId = accountOf(c);
    const body = (await c.req.json().catch(() => ({}))) as { templates?: string[] };
    const parsed = CreateTrainingJob.safeParse(body ?? {});
    if (!parsed.success) throw fail('BAD_REQUEST', `templates: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const { total, templates } = await deps.examples.summary(userId);
    const wanted = parsed.data.templates;
    for (const id of wanted ?? []) {
      if (!templates.some((t) => t.id === id))
        throw fail('NOT_FOUND', `templates: no question template ${id} in this account`);
    }
    const chosen = templates.filter((t) => (wanted ? wanted.includes(t.id) : true));
    const ready = chosen.filter((t) => t.examples >= deps.minExamples);
    if (ready.length === 0) {
      throw fail(
        'BAD_REQUEST',
        total === 0
          ? 'templates: this account has no labelled examples yet; upload some (POST /control/v1/examples) or record outcomes first'
          : `templates: each template needs at least ${deps.minExamples} labelled examples to be fitted; the most any has is ${Math.max(0, ...chosen.map((t) => t.examples))}`,
      );
    }
    await deps.adapters.checkRoom(userId);
    const examples = Math.min(
      deps.maxJobExamples,
      ready.reduce((n, t) => n + t.examples, 0),
    );
    const job = await deps.jobs.enqueue(
      userId,
      ready.map((t) => t.id),
      examples,
    );
    return c.json(await wireWithOutlook(deps, job), 202);
  });
  api.openapi(listJobsRoute, async (c) => {
    const jobs = await deps.jobs.list(accountOf(c));
    const data = [];
    for (const j of jobs) data.push(await wireWithOutlook(deps, j));
    return c.json({ data }, 200);
  });
  api.openapi(getJobRoute, async (c) => {
    const { id } = c.req.valid('param');
    const job = await deps.jobs.get(accountOf(c), id);
    if (!job) throw fail('NOT_FOUND', `no training job ${id} in this account`);
    return c.json(await wireWithOutlook(deps, job), 200);
  });
}
