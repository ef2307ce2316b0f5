import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { Db } from '../../../db/open.ts';
import type { AccountDeletion } from '../../../domain/account-deletion.ts';
import type { AppEnv } from '../../../http/env.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import { AccountDeleted, AccountInfo } from './protocol.ts';

export const getAccountRoute = createRoute({
  method: 'get',
  path: '/control/v1/account',
  tags: ['Console'],
  summary: 'The signed-in account',
  security: [{ session: [] }],
  responses: {
    200: { description: 'The account', content: { 'application/json': { schema: AccountInfo } } },
    ...errorResponses(401, 403),
  },
});

export const deleteAccountRoute = createRoute({
  method: 'delete',
  path: '/control/v1/account',
  tags: ['Console'],
  summary: 'Delete the signed-in account',
  description:
    'Revokes every API key at once, ends every session, removes the account and its sign-in methods, and keeps its usage only as daily totals with no account or key.',
  security: [{ session: [] }],
  responses: {
    200: { description: 'Deleted', content: { 'application/json': { schema: AccountDeleted } } },
    ...errorResponses(401, 403),
  },
});

export function registerAccount(
  app: OpenAPIHono<AppEnv>,
  deps: { db: Db; deletion: AccountDeletion; clearCookies: string[] },
): void {
  app.openapi(getAccountRoute, async (c) => {
    const row = await deps.db.kysely
      .selectFrom('user')
      .selectAll()
      .where('id', '=', c.get('account').userId)
      .executeTakeFirst();
    if (!row) throw fail('UNAUTHENTICATED', 'this account no longer exists');
    return c.json(
      {
        id: row.id,
        email: row.email,
        name: row.name,
        email_verified: row.emailVerified === true || Number(row.emailVerified) === 1,
        created_at: new Date(row.createdAt).toISOString(),
      },
      200,
    );
  });
  app.openapi(deleteAccountRoute, async (c) => {
    const { revokedKeys } = await deps.deletion.remove(c.get('account').userId);
    for (const cookie of deps.clearCookies) c.header('set-cookie', cookie, { append: true });
    return c.json({ deleted: true as const, revoked_keys: revokedKeys }, 200);
  });
}
