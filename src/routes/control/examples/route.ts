import type { Context } from 'hono';
import { type ExampleStore, examplesOf, type TemplateSummary } from '../../../domain/examples.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import { LabelledRow, parseLabelledJsonl } from '../../../systemone/examples.ts';
import { ExampleSummary, ExampleUpload, LIMITS, TemplateIdParam, UploadResult } from './protocol.ts';

export const uploadExamplesRoute = defineRoute({
  auth: 'key-or-session',
  bodyLimit: 'upload',
  method: 'post',
  path: '/examples',
  tags: ['Adapters'],
  summary: 'Upload labelled examples (JSON Lines)',
  description:
    "Each line a LabelledExample: a state, its questions in System One form and the true label of each. Validated row by row; one invalid row (or the account over its limits) stores nothing. A labelled question (template, state and label) that earlier uploads already stored is not stored again: the same file uploaded twice stores nothing the second time, and `duplicates` counts what was skipped (safe to retry). With a bearer key the examples go to the key's account.",
  request: {
    body: {
      required: true,
      // application/jsonl is taken too; it is not listed because the validator would read it as JSON.
      content: { 'application/x-ndjson': { schema: ExampleUpload } },
    },
  },
  responses: {
    201: { description: 'Stored', content: { 'application/json': { schema: UploadResult } } },
    ...errorResponses(400, 401, 403, 409, 413, 415, 422),
  },
});

export const listExamplesRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/examples',
  tags: ['Adapters'],
  summary: "The account's labelled examples by question template",
  responses: {
    200: { description: 'Templates with their counts', content: { 'application/json': { schema: ExampleSummary } } },
    ...errorResponses(401, 403),
  },
});

export const deleteTemplateRoute = defineRoute({
  auth: 'key-or-session',
  method: 'delete',
  path: '/examples/{id}',
  tags: ['Adapters'],
  summary: "Delete a question template's examples",
  request: { params: TemplateIdParam },
  responses: {
    204: { description: 'Deleted' },
    ...errorResponses(401, 403, 404),
  },
});

/** The account a request acts for: the bearer key's, or the session's. */
export function accountOf(c: Context<AppEnv>): string {
  return c.get('owner')?.userId ?? c.get('account').userId;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function wireTemplate(t: TemplateSummary) {
  return {
    id: t.id,
    type: t.type as 'noul' | 'choice' | 'score',
    question: JSON.parse(t.question) as Record<string, unknown>,
    examples: t.examples,
    outcomes: t.outcomes,
    teacher_labels: t.teacherLabels,
    labels: t.labels,
    created_at: iso(t.createdAt),
    last_added_at: t.lastAddedAt ? iso(t.lastAddedAt) : null,
  };
}

export function registerExamples(api: Api, examples: ExampleStore): void {
  // The row schema is documented beside the upload (the body itself is JSON Lines).
  api.app.openAPIRegistry.register('LabelledExample', LabelledRow);
  api.openapi(uploadExamplesRoute, async (c) => {
    const userId = accountOf(c);
    const rows = parseLabelledJsonl(await c.req.text());
    const list = examplesOf(rows);
    const stored = await examples.add(userId, list);
    const types = new Map(list.map((e) => [e.templateId, e.type]));
    const templates = [...stored.templates].map(([id, t]) => ({ id, type: types.get(id) ?? '', ...t }));
    return c.json(
      { added: stored.added, duplicates: stored.duplicates, rows: rows.length, total: stored.total, templates },
      201,
    );
  });
  api.openapi(listExamplesRoute, async (c) => {
    const { total, templates } = await examples.summary(accountOf(c));
    return c.json({ total, limits: LIMITS, templates: templates.map(wireTemplate) }, 200);
  });
  api.openapi(deleteTemplateRoute, async (c) => {
    const { id } = c.req.valid('param');
    if (!(await examples.removeTemplate(accountOf(c), id))) {
      throw fail('NOT_FOUND', `no question template ${id} in this account`);
    }
    return c.body(null, 204);
  });
}
