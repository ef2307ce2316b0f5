import type { z } from '@hono/zod-openapi';
import type { StoredAdapter } from '../../../domain/adapters.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import type { TeachDeps } from '../../teach.ts';
import { accountOf } from '../examples/route.ts';
import type { TemplateReport } from '../training-jobs/protocol.ts';
import { AdapterIdParam, AdapterList, AdapterSummary, SetFallback } from './protocol.ts';

export const setFallbackRoute = defineRoute({
  auth: 'key-or-session',
  method: 'put',
  path: '/adapters/{id}/fallback',
  tags: ['Adapters'],
  summary: "Turn an adapter's fallback to a teacher on or off (opt-in)",
  description:
    "With a threshold, every answer of the adapter whose confidence is under it is asked of the teacher instead, one teacher call per request for all such answers; x_answered_by names teacher:<id>, and usage counts teacher calls apart (teacher_calls). A teacher that fails leaves the adapter's answer. null turns it off.",
  request: {
    params: AdapterIdParam,
    body: { required: true, content: { 'application/json': { schema: SetFallback } } },
  },
  responses: {
    200: { description: 'The adapter', content: { 'application/json': { schema: AdapterSummary } } },
    ...errorResponses(400, 401, 403, 404, 413, 415, 422),
  },
});

export const listAdaptersRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/adapters',
  tags: ['Adapters'],
  summary: "The account's adapters, newest first, with their held-out metrics",
  responses: {
    200: { description: 'Adapters', content: { 'application/json': { schema: AdapterList } } },
    ...errorResponses(401, 403),
  },
});

export const getAdapterRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/adapters/{id}',
  tags: ['Adapters'],
  summary: 'One adapter: per template, held-out metrics before and after and reliability diagrams',
  request: { params: AdapterIdParam },
  responses: {
    200: { description: 'The adapter', content: { 'application/json': { schema: AdapterSummary } } },
    ...errorResponses(401, 403, 404),
  },
});

export const deleteAdapterRoute = defineRoute({
  auth: 'key-or-session',
  method: 'delete',
  path: '/adapters/{id}',
  tags: ['Adapters'],
  summary: 'Delete an adapter: requests naming it fail from now on',
  request: { params: AdapterIdParam },
  responses: {
    204: { description: 'Deleted' },
    ...errorResponses(401, 403, 404),
  },
});

export function registerAdapters(api: Api, deps: TeachDeps): void {
  const wire = (a: StoredAdapter) => ({
    id: a.id,
    base_model: a.base,
    servable: a.base === deps.baseModel(),
    retrain:
      a.base === deps.baseModel()
        ? null
        : `fitted on ${a.base}; this server runs ${deps.baseModel()}: start a training job on the same examples (POST /control/v1/training-jobs) to serve it again`,
    job_id: a.jobId,
    teacher: a.teacher,
    fallback: a.fallback ? { ...a.fallback, available: deps.teachers.get(a.fallback.teacher) !== undefined } : null,
    created_at: new Date(a.createdAt).toISOString(),
    templates: JSON.parse(a.report) as z.infer<typeof TemplateReport>[],
  });
  api.openapi(listAdaptersRoute, async (c) => {
    const list = await deps.adapters.list(accountOf(c));
    return c.json({ data: list.map(wire) }, 200);
  });
  api.openapi(getAdapterRoute, async (c) => {
    const { id } = c.req.valid('param');
    const adapter = await deps.adapters.find(accountOf(c), id);
    if (!adapter) throw fail('NOT_FOUND', `no adapter ${id} in this account`);
    return c.json(wire(adapter), 200);
  });
  api.openapi(setFallbackRoute, async (c) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const userId = accountOf(c);
    const adapter = await deps.adapters.find(userId, id);
    if (!adapter) throw fail('NOT_FOUND', `no adapter ${id} in this account`);
    let fallback = null;
    if (body.threshold !== null) {
      const teacher = body.teacher ?? adapter.teacher;
      if (!teacher)
        throw fail('BAD_REQUEST', 'teacher: this adapter learnt from no teacher; name one (GET /control/v1/teachers)');
      if (!deps.teachers.get(teacher))
        throw fail(
          'NOT_FOUND',
          `teacher: no teacher ${JSON.stringify(teacher)} on this server (GET /control/v1/teachers)`,
        );
      fallback = { teacher, threshold: body.threshold };
    }
    await deps.adapters.setFallback(userId, id, fallback);
    deps.resolver.forget(userId, id);
    return c.json(wire({ ...adapter, fallback }), 200);
  });
  api.openapi(deleteAdapterRoute, async (c) => {
    const { id } = c.req.valid('param');
    const userId = accountOf(c);
    if (!(await deps.adapters.remove(userId, id))) throw fail('NOT_FOUND', `no adapter ${id} in this account`);
    // Stops at once in this process; elsewhere within the resolver's cache TTL (1 s).
    deps.resolver.forget(userId, id);
    return c.body(null, 204);
  });
}
