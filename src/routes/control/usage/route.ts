import type { UsageRecorder } from '../../../domain/usage.ts';
import type { UsageReporter } from '../../../domain/usage-report.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { UsageQuery, UsageReport } from './protocol.ts';

export const usageRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/usage',
  tags: ['Console'],
  summary: 'Usage by day: of one API key (bearer) or of the account (session cookie)',
  description:
    "Requests, input and output tokens, questions, errors and teacher calls by UTC day over the window, zero-filled. With `Authorization: Bearer <key>` the report covers that key; with the session cookie it covers the account, with one item per active key. `jobs` gives each distillation job's teacher calls by day either way.",
  request: { query: UsageQuery },
  responses: {
    200: { description: 'The usage report', content: { 'application/json': { schema: UsageReport } } },
    ...errorResponses(401, 403, 422),
  },
});

export interface UsageRouteDeps {
  usage: UsageRecorder;
  reporter: UsageReporter;
}

export function registerUsage(api: Api, deps: UsageRouteDeps): void {
  api.openapi(usageRoute, async (c) => {
    const { days } = c.req.valid('query');
    // What this process has buffered is part of the answer.
    await deps.usage.flush();
    const owner = c.get('owner');
    if (owner) return c.json(await deps.reporter.report(owner.userId, days, owner.keyId), 200);
    return c.json(await deps.reporter.report(c.get('account').userId, days), 200);
  });
}
