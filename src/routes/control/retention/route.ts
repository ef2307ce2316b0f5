import {
  ACCOUNT_SCOPE,
  MAX_RETENTION_DAYS,
  type RetentionPolicy as Policy,
  type Retention,
} from '../../../domain/retention.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import { accountOf } from '../examples/route.ts';
import { RetentionPolicy, SetRetention } from './protocol.ts';

export const getRetentionRoute = defineRoute({
  auth: 'key-or-session',
  method: 'get',
  path: '/retention',
  tags: ['Adapters'],
  summary: 'Request retention: whether request content is kept, for how long',
  description:
    'Off by default: nothing of a /v1/systemone request is kept. With retention on for a key (or the whole account), each request made with it is kept (state, questions, answers) for the period, so that outcomes can be posted for it.',
  responses: {
    200: { description: 'The policy', content: { 'application/json': { schema: RetentionPolicy } } },
    ...errorResponses(401, 403),
  },
});

export const setRetentionRoute = defineRoute({
  auth: 'key-or-session',
  method: 'put',
  path: '/retention',
  tags: ['Adapters'],
  summary: 'Turn request retention on (for 1 to 90 days) or off, for the account or one key',
  description:
    'Applies to requests made from then on. Turning it off, or shortening it, deletes at once what the new policy no longer covers. Revoking a key deletes what was kept for it; deleting the account deletes everything.',
  request: { body: { required: true, content: { 'application/json': { schema: SetRetention } } } },
  responses: {
    200: { description: 'The policy after the change', content: { 'application/json': { schema: RetentionPolicy } } },
    ...errorResponses(400, 401, 403, 404, 413, 415, 422),
  },
});

async function wire(retention: Retention, userId: string, p: Policy) {
  return {
    account_days: p.account,
    keys: Object.entries(p.keys).map(([key_id, days]) => ({ key_id, days })),
    max_days: MAX_RETENTION_DAYS,
    retained: await retention.count(userId),
  };
}

export function registerRetention(api: Api, retention: Retention): void {
  api.openapi(getRetentionRoute, async (c) => {
    const userId = accountOf(c);
    return c.json(await wire(retention, userId, await retention.policy(userId)), 200);
  });
  api.openapi(setRetentionRoute, async (c) => {
    const { days, key_id } = c.req.valid('json');
    const owner = c.get('owner');
    if (owner && key_id !== undefined && key_id !== owner.keyId) {
      throw fail('FORBIDDEN', 'key_id: a bearer key may set only its own retention; sign in to the console for others');
    }
    const scope = owner ? owner.keyId : (key_id ?? ACCOUNT_SCOPE);
    const userId = accountOf(c);
    const policy = await retention.set(userId, scope, days === 0 ? null : days);
    return c.json(await wire(retention, userId, policy), 200);
  });
}
