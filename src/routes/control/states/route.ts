import { z } from '@hono/zod-openapi';
import type { DistillStore } from '../../../domain/distill.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { UPLOAD_LIMITS } from '../../../systemone/examples.ts';
import { parseStatesJsonl, UnlabelledRow } from '../../../systemone/states.ts';
import { accountOf } from '../examples/route.ts';

const StatesSummary = z
  .object({
    states: z.number().int().openapi({ description: 'Unlabelled states the account has uploaded.' }),
    limit: z.number().int().openapi({ description: 'Unlabelled states an account may keep.' }),
    soft_labels: z
      .array(
        z.object({
          template: z.string(),
          teacher: z.string(),
          count: z.number().int(),
          last_added_at: z.string().openapi({ format: 'date-time' }),
        }),
      )
      .openapi({
        description:
          "Teachers' soft labels per template (kept apart from labelled examples; deleted with their template: DELETE /control/v1/examples/{id}).",
      }),
  })
  .openapi('UnlabelledStates');

export const uploadStatesRoute = defineRoute({
  auth: 'key-or-session',
  bodyLimit: 'upload',
  method: 'post',
  path: '/states',
  tags: ['Adapters'],
  summary: 'Upload unlabelled states for a teacher to label (JSON Lines)',
  description: `Each line {"state": ...}: a state as POST /v1/systemone takes it. Same bounds as labelled examples: ${UPLOAD_LIMITS.maxBytes / 2 ** 20} MiB, ${UPLOAD_LIMITS.maxRows} rows an upload, ${UPLOAD_LIMITS.maxStateChars} characters a state; all or nothing.`,
  request: { body: { required: true, content: { 'application/x-ndjson': { schema: UnlabelledRow } } } },
  responses: {
    201: {
      description: 'Stored',
      content: {
        'application/json': {
          schema: z.object({ added: z.number().int(), total: z.number().int() }).openapi('StatesUploaded'),
        },
      },
    },
    ...errorResponses(400, 401, 403, 409, 413, 415, 422),
  },
});

export const listStatesRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/states',
  tags: ['Adapters'],
  summary: "The account's unlabelled states and its teachers' soft labels, counted",
  responses: {
    200: { description: 'Counts', content: { 'application/json': { schema: StatesSummary } } },
    ...errorResponses(401, 403),
  },
});

export const deleteStatesRoute = defineRoute({
  auth: 'key-or-session',
  method: 'delete',
  path: '/states',
  tags: ['Adapters'],
  summary: "Delete the account's unlabelled states (soft labels already made are kept with their templates)",
  responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403) },
});

export function registerStates(api: Api, store: DistillStore): void {
  api.openapi(uploadStatesRoute, async (c) => {
    const states = parseStatesJsonl(await c.req.text());
    return c.json(await store.addStates(accountOf(c), states), 201);
  });
  api.openapi(listStatesRoute, async (c) => {
    const s = await store.summary(accountOf(c));
    return c.json(
      {
        states: s.states,
        limit: store.maxStates,
        soft_labels: s.softLabels.map((l) => ({
          template: l.template,
          teacher: l.teacher,
          count: l.count,
          last_added_at: new Date(l.lastAddedAt).toISOString(),
        })),
      },
      200,
    );
  });
  api.openapi(deleteStatesRoute, async (c) => {
    await store.removeStates(accountOf(c));
    return c.body(null, 204);
  });
}
