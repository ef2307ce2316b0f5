import type { Outcomes } from '../../../domain/outcomes.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { accountOf } from '../examples/route.ts';
import { OutcomeRequest, RecordedOutcome } from './protocol.ts';

export const outcomeRoute = defineRoute({
  auth: 'key-or-session',
  method: 'post',
  path: '/outcomes',
  tags: ['Adapters'],
  summary: 'Record the observed outcome of a past decision',
  description:
    "Labels one question of a retained request (by the response's x-request-id and the question id) with what turned out true; it becomes a labelled example of the question's template. Posting again for the same request and question corrects it (200). Needs request retention on when the request was made: otherwise 409 retention_off. A label the question does not have is a 422 at `label`, as in an upload of labelled examples.",
  request: { body: { required: true, content: { 'application/json': { schema: OutcomeRequest } } } },
  responses: {
    201: { description: 'Stored as a labelled example', content: { 'application/json': { schema: RecordedOutcome } } },
    200: {
      description: 'An earlier outcome was corrected',
      content: { 'application/json': { schema: RecordedOutcome } },
    },
    ...errorResponses(401, 403, 404, 409, 413, 415, 422),
  },
});

export function registerOutcomes(api: Api, outcomes: Outcomes): void {
  api.openapi(outcomeRoute, async (c) => {
    const body = c.req.valid('json');
    const r = await outcomes.record(accountOf(c), {
      requestId: body.request_id,
      questionId: body.question_id,
      label: body.label,
    });
    const json = { example_id: r.exampleId, template_id: r.templateId, label: r.label, replaced: r.replaced };
    return r.replaced ? c.json(json, 200) : c.json(json, 201);
  });
}
