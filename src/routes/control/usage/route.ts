import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Auth } from '../../../auth/create-auth.ts';
import type { KeyService } from '../../../domain/keys.ts';
import type { UsageRecorder } from '../../../domain/usage.ts';
import type { UsageReporter } from '../../../domain/usage-report.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { readSession } from '../../../http/middleware/session-auth.ts';
import { fail } from '../../../lib/errors.ts';
import { UsageQuery, UsageReport } from './protocol.ts';

// Typed apart: an inline two-entry literal defeats @hono/zod-openapi's inference of the request.
const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];

export const usageRoute = createRoute({
  method: 'get',
  path: '/control/v1/usage',
  tags: ['Console'],
  summary: 'Usage by day: of one API key (bearer) or of the account (session cookie)',
  description:
    'Requests, input and output tokens, questions and errors by UTC day over the window, zero-filled. With `Authorization: Bearer <key>` the report covers that key; with the session cookie it covers the account, with one item per active key.',
  security,
  request: { query: UsageQuery },
  responses: {
    200: { description: 'The usage report', content: { 'application/json': { schema: UsageReport } } },
    ...errorResponses(401, 403, 422),
  },
});

export interface UsageRouteDeps {
  auth: Auth;
  keys: KeyService;
  usage: UsageRecorder;
  reporter: UsageReporter;
}

export function registerUsage(app: OpenAPIHono<AppEnv>, deps: UsageRouteDeps): void {
  app.openapi(usageRoute, async (c) => {
    const { days } = c.req.valid('query');
    const header = c.req.header('authorization');
    // What this process has buffered is part of the answer.
    await deps.usage.flush();
    if (header) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match?.[1]) throw fail('INVALID_CREDENTIALS', 'malformed Authorization header; expected Bearer <API key>');
      const owner = await deps.keys.verify(match[1]);
      if (!owner) throw fail('INVALID_CREDENTIALS', 'invalid or revoked API key');
      return c.json(await deps.reporter.report(owner.userId, days, owner.keyId), 200);
    }
    const account = await readSession(deps.auth, c.req.raw.headers);
    if (!account) {
      throw fail('UNAUTHENTICATED', 'send Authorization: Bearer <API key>, or sign in for a session cookie');
    }
    return c.json(await deps.reporter.report(account.userId, days), 200);
  });
}
