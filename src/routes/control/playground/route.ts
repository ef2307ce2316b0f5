import type { UsageRecorder } from '../../../domain/usage.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { ERRORS, errorResponses } from '../../../http/errors.ts';
import { recordUsage } from '../../../http/middleware/usage-meter.ts';
import { isDomainError } from '../../../lib/errors.ts';
import { SystemOneRequest, SystemOneResponse } from '../../../systemone/protocol.ts';
import { ABSTAINED_HEADER, abstainedHeader, type Consumption, type SystemOne } from '../../../systemone/serve.ts';

/** The usage identity of console playground calls: not an API key; counted in the account's totals. */
export const PLAYGROUND_KEY_ID = 'playground';
/** The route usage events of the playground are recorded under. */
export const PLAYGROUND_PATH = '/control/v1/playground/systemone';

export const playgroundRoute = defineRoute({
  auth: 'session',
  // Inference-sized bodies (BRIER_MAX_BODY_BYTES), as POST /v1/systemone takes.
  bodyLimit: 'inference',
  method: 'post',
  path: '/playground/systemone',
  tags: ['Console'],
  summary: 'Run a System One request with the console session (the playground)',
  description:
    'The same request, validation, limits and answer as POST /v1/systemone, authenticated by the session cookie instead of an API key. Usage is metered to the account under the key id `playground`. The `server-timing` header carries the server-side latency.',
  request: { body: { required: true, content: { 'application/json': { schema: SystemOneRequest } } } },
  responses: {
    200: {
      description: 'Answers keyed by question id',
      content: { 'application/json': { schema: SystemOneResponse } },
    },
    ...errorResponses(400, 401, 403, 413, 415, 422, 503),
  },
});

export function registerPlayground(api: Api, deps: { systemOne: SystemOne; usage: UsageRecorder }): void {
  api.openapi(playgroundRoute, async (c) => {
    const started = performance.now();
    const account = c.get('account');
    const body = c.req.valid('json');
    let status = 500;
    let metered: Consumption | undefined;
    try {
      const decided = await deps.systemOne.serve(body, c.req.raw.signal, { account: account.userId });
      metered = decided.consumed;
      status = 200;
      const ms = performance.now() - started;
      const abstained = abstainedHeader(decided.response);
      return c.json(decided.response, 200, {
        'server-timing': `decide;dur=${ms.toFixed(1)}`,
        ...(abstained ? { [ABSTAINED_HEADER]: abstained } : {}),
      });
    } catch (error) {
      status = isDomainError(error) ? ERRORS[error.code].status : 500;
      throw error;
    } finally {
      const who = { keyId: PLAYGROUND_KEY_ID, userId: account.userId };
      recordUsage(deps.usage, who, PLAYGROUND_PATH, status, metered, started);
    }
  });
}
