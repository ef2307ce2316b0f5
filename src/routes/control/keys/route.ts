import type { KeyService, KeyListing as Listing } from '../../../domain/keys.ts';
import type { Retention } from '../../../domain/retention.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import { CreatedKey, CreateKeyRequest, KeyIdParam, KeyList } from './protocol.ts';

export const createKeyRoute = defineRoute({
  auth: 'session',
  method: 'post',
  path: '/keys',
  tags: ['Console'],
  summary: 'Create an API key (shown once)',
  description: 'At most 3 active keys per account. The value is in `key` in this response only.',
  request: { body: { required: true, content: { 'application/json': { schema: CreateKeyRequest } } } },
  responses: {
    201: { description: 'The key, once', content: { 'application/json': { schema: CreatedKey } } },
    ...errorResponses(401, 403, 409, 413, 415, 422),
  },
});

export const listKeysRoute = defineRoute({
  auth: 'session',
  method: 'get',
  path: '/keys',
  tags: ['Console'],
  summary: "List the account's active API keys (prefixes only)",
  responses: {
    200: { description: 'Active keys, oldest first', content: { 'application/json': { schema: KeyList } } },
    ...errorResponses(401, 403),
  },
});

export const revokeKeyRoute = defineRoute({
  auth: 'session',
  method: 'delete',
  path: '/keys/{id}',
  tags: ['Console'],
  summary: 'Revoke an API key',
  description: 'The key stops working at once and is no longer listed.',
  request: { params: KeyIdParam },
  responses: {
    204: { description: 'Revoked' },
    ...errorResponses(401, 403, 404),
  },
});

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function wire(k: Listing) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created_at: new Date(k.createdAt).toISOString(),
    last_used_at: iso(k.lastUsedAt),
  };
}

export function registerKeys(api: Api, keys: KeyService, retention?: Retention): void {
  api.openapi(createKeyRoute, async (c) => {
    const { name } = c.req.valid('json');
    const created = await keys.create(c.get('account').userId, name);
    return c.json({ ...wire(created), key: created.key }, 201);
  });
  api.openapi(listKeysRoute, async (c) => {
    const list = await keys.list(c.get('account').userId);
    return c.json({ data: list.map(wire) }, 200);
  });
  api.openapi(revokeKeyRoute, async (c) => {
    const { id } = c.req.valid('param');
    const userId = c.get('account').userId;
    if (!(await keys.revoke(userId, id))) throw fail('NOT_FOUND', `no active API key ${id} in this account`);
    // What was retained of the key's requests goes with it.
    await retention?.forgetKey(userId, id);
    return c.body(null, 204);
  });
}
