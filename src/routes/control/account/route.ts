import type { AccountDeletion } from '../../../domain/account-deletion.ts';
import type { AccountService } from '../../../domain/accounts.ts';
import { type Api, defineRoute } from '../../../http/api.ts';
import { errorResponses } from '../../../http/errors.ts';
import { fail } from '../../../lib/errors.ts';
import { AccountDeleted, AccountInfo } from './protocol.ts';

export const getAccountRoute = defineRoute({
  auth: 'session',
  method: 'get',
  path: '/account',
  tags: ['Console'],
  summary: 'The signed-in account',
  responses: {
    200: { description: 'The account', content: { 'application/json': { schema: AccountInfo } } },
    ...errorResponses(401, 403),
  },
});

export const deleteAccountRoute = defineRoute({
  auth: 'session',
  method: 'delete',
  path: '/account',
  tags: ['Console'],
  summary: 'Delete the signed-in account',
  description:
    'Revokes every API key at once, ends every session, removes the account and its sign-in methods, and keeps its usage only as daily totals with no account or key.',
  responses: {
    200: { description: 'Deleted', content: { 'application/json': { schema: AccountDeleted } } },
    ...errorResponses(401, 403),
  },
});

export interface AccountRouteDeps {
  accounts: AccountService;
  deletion: AccountDeletion;
  /** Set-Cookie values that clear the session cookies, sent with a deletion. */
  clearCookies: string[];
}

export function registerAccount(api: Api, deps: AccountRouteDeps): void {
  api.openapi(getAccountRoute, async (c) => {
    const account = await deps.accounts.find(c.get('account').userId);
    if (!account) throw fail('UNAUTHENTICATED', 'this account no longer exists');
    return c.json(
      {
        id: account.id,
        email: account.email,
        name: account.name,
        email_verified: account.emailVerified,
        created_at: account.createdAt.toISOString(),
      },
      200,
    );
  });
  api.openapi(deleteAccountRoute, async (c) => {
    const { revokedKeys } = await deps.deletion.remove(c.get('account').userId);
    for (const cookie of deps.clearCookies) c.header('set-cookie', cookie, { append: true });
    return c.json({ deleted: true as const, revoked_keys: revokedKeys }, 200);
  });
}
