import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashSessionToken } from '../../src/auth/hashed-session-tokens.ts';
import { migrations } from '../../src/db/migrations.ts';
import { type AppClient, createAppClient } from '../fixtures/app-client.ts';
import { databases, makeTestApp, notePostgresSkip, type TestApp } from '../harness.ts';

notePostgresSkip();

const PASSWORD = 'correct horse battery';
const COOKIE = 'brier.session_token';

for (const kind of databases()) {
  describe(`session and password-reset tokens are stored hashed (${kind})`, () => {
    let t: TestApp;
    before(async () => {
      t = await makeTestApp({ db: kind });
    });
    after(() => t.close());

    async function signUpVerified(email: string): Promise<void> {
      const c = createAppClient(t.app);
      const up = await c.request('/control/v1/auth/sign-up/email', { body: { email, password: PASSWORD } });
      assert.equal(up.status, 200, await up.clone().text());
      const link = t.outbox.findLast((m) => m.to === email && /verify/i.test(m.subject))?.link;
      assert.ok(link, 'a verification link');
      assert.ok((await c.request(link)).status < 400);
    }

    async function signIn(email: string, password = PASSWORD): Promise<AppClient> {
      const c = createAppClient(t.app);
      const res = await c.request('/control/v1/auth/sign-in/email', { body: { email, password } });
      assert.equal(res.status, 200, await res.clone().text());
      return c;
    }

    /** The session token the cookie carries, and the cookie's whole signed value. */
    function cookieToken(c: AppClient): { token: string; signed: string } {
      const value = c.jar.get(COOKIE);
      assert.ok(value, 'a session cookie');
      const signed = decodeURIComponent(value);
      return { token: signed.slice(0, signed.indexOf('.')), signed };
    }

    async function sessionRows(email: string) {
      return t.db.kysely
        .selectFrom('session')
        .innerJoin('user', 'user.id', 'session.userId')
        .selectAll('session')
        .where('user.email', '=', email)
        .execute();
    }

    const consoleStatus = async (c: AppClient) => (await c.request('/control/v1/keys')).status;

    test('after sign-in the table holds no value equal to the token or the cookie, and the cookie opens the console', async () => {
      const email = `hashed-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      const { token, signed } = cookieToken(c);
      const everything = JSON.stringify(await t.db.kysely.selectFrom('session').selectAll().execute());
      assert.ok(!everything.includes(token), 'the token is nowhere in the session table');
      assert.ok(!everything.includes(signed) && !everything.includes(encodeURIComponent(signed)));
      assert.ok((await sessionRows(email)).some((row) => row.token === hashSessionToken(token)));

      assert.equal(await consoleStatus(c), 200);
      const session = await (await c.request('/control/v1/auth/get-session')).json();
      assert.equal(session.user.email, email);
    });

    test('a session past updateAge is refreshed: the expiry moves, the same cookie keeps working, still hashed', async () => {
      const email = `refresh-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      const { token } = cookieToken(c);
      // As if signed in a day and a minute ago (expiresIn 7 days, updateAge 1 day).
      const aged = new Date(Date.now() + 6 * 86_400_000 - 60_000);
      await t.db.kysely
        .updateTable('session')
        .set({ expiresAt: aged })
        .where('token', '=', hashSessionToken(token))
        .execute();

      const res = await c.request('/control/v1/auth/get-session');
      assert.equal(res.status, 200);
      assert.ok(
        res.headers.getSetCookie().some((l) => l.startsWith(`${COOKIE}=`)),
        'the refresh sets the cookie again',
      );
      assert.equal(cookieToken(c).token, token, 'the refreshed cookie carries the token, not its hash');
      const row = (await sessionRows(email)).find((r) => r.token === hashSessionToken(token));
      assert.ok(row, 'the row holds the hash');
      assert.ok(new Date(row?.expiresAt ?? 0).getTime() > aged.getTime() + 60_000, 'the expiry moved');
      assert.equal(await consoleStatus(c), 200);
    });

    test('sign-out ends the session and deletes its row', async () => {
      const email = `signout-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      const cookie = c.jar.get(COOKIE) ?? '';
      const hashed = hashSessionToken(cookieToken(c).token);
      assert.ok((await sessionRows(email)).some((row) => row.token === hashed));
      assert.equal((await c.request('/control/v1/auth/sign-out', { body: {} })).status, 200);
      assert.ok(!(await sessionRows(email)).some((row) => row.token === hashed), 'its row is gone');
      c.jar.set(COOKIE, cookie);
      assert.equal(await consoleStatus(c), 401, 'the old cookie opens nothing');
    });

    test('a password reset ends every session of the account', async () => {
      const email = `reset-${kind}@example.com`;
      await signUpVerified(email);
      const first = await signIn(email);
      const second = await signIn(email);
      assert.equal(await consoleStatus(first), 200);
      assert.equal(await consoleStatus(second), 200);
      const asked = await first.request('/control/v1/auth/request-password-reset', { body: { email }, cookies: false });
      assert.equal(asked.status, 200);
      const link = t.outbox.findLast((m) => m.to === email && /reset/i.test(m.subject))?.link ?? '';
      const token = /reset-password\/([^?\s]+)/.exec(link)?.[1];
      assert.ok(token, link);
      const reset = await first.request('/control/v1/auth/reset-password', {
        body: { token, newPassword: 'a brand new passphrase' },
        cookies: false,
      });
      assert.equal(reset.status, 200, await reset.clone().text());
      assert.deepEqual(await sessionRows(email), []);
      assert.equal(await consoleStatus(first), 401);
      assert.equal(await consoleStatus(second), 401);
    });

    test('a password-reset token is stored hashed, and still resets the password once', async () => {
      const email = `reset-token-${kind}@example.com`;
      await signUpVerified(email);
      const c = createAppClient(t.app);
      assert.equal((await c.request('/control/v1/auth/request-password-reset', { body: { email } })).status, 200);
      const link = t.outbox.findLast((m) => m.to === email && /reset/i.test(m.subject))?.link ?? '';
      const token = /reset-password\/([^?\s]+)/.exec(link)?.[1];
      assert.ok(token, link);
      const everything = JSON.stringify(await t.db.kysely.selectFrom('verification').selectAll().execute());
      assert.ok(!everything.includes(token), 'the reset token is nowhere in the verification table');

      const body = { token, newPassword: 'a brand new passphrase' };
      assert.equal((await c.request('/control/v1/auth/reset-password', { body })).status, 200);
      assert.equal((await c.request('/control/v1/auth/reset-password', { body })).status, 400, 'once');
      await signIn(email, 'a brand new passphrase');
    });

    test('deleting the account deletes its sessions', async () => {
      const email = `leaver-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      assert.equal((await c.request('/control/v1/account', { method: 'DELETE' })).status, 200);
      assert.deepEqual(await sessionRows(email), []);
      assert.equal(await consoleStatus(c), 401);
    });

    test('list-sessions, revoke-session and revoke-other-sessions, which need stored tokens in clear, are not served', async () => {
      const email = `listing-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      assert.equal((await c.request('/control/v1/auth/list-sessions')).status, 404);
      assert.equal((await c.request('/control/v1/auth/revoke-session', { body: { token: 'x' } })).status, 404);
      assert.equal((await c.request('/control/v1/auth/revoke-other-sessions', { body: {} })).status, 404);
      assert.equal(await consoleStatus(c), 200);
    });

    test('a session stored in clear before the upgrade is hashed by migration 0004 and stays signed in', async () => {
      const email = `upgrade-${kind}@example.com`;
      await signUpVerified(email);
      const c = await signIn(email);
      const { token } = cookieToken(c);
      // The row as the code before this change left it: the token in clear.
      await t.db.kysely.updateTable('session').set({ token }).where('token', '=', hashSessionToken(token)).execute();
      assert.equal(await consoleStatus(c), 401, 'lookups hash the cookie token, so a clear row is not found');

      const upgrade = migrations(t.db.dialect)['0004_session_token_hash'];
      assert.ok(upgrade);
      await upgrade.up(t.db.kysely);
      assert.ok((await sessionRows(email)).some((row) => row.token === hashSessionToken(token)));
      assert.ok(!(await sessionRows(email)).some((row) => row.token === token), 'no clear token is left');
      assert.equal(await consoleStatus(c), 200);
    });
  });
}
