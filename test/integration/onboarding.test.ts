import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createBrowser } from '../fixtures/browser.ts';
import { type ControlPlane, SITE_ORIGIN, startControlPlane } from '../fixtures/control-plane.ts';
import { linkIn } from '../fixtures/smtp-sink.ts';
import { databases, notePostgresSkip } from '../harness.ts';

notePostgresSkip();

const PASSWORD = 'correct horse battery';
const body = { state: 'I was charged twice. Please refund.', questions: { refund: { type: 'noul' } } };

for (const kind of databases()) {
  describe(`control plane onboarding over HTTP (${kind})`, () => {
    let cp: ControlPlane;
    before(async () => {
      cp = await startControlPlane(kind);
    });
    after(() => cp.close());

    const api = (path: string) => `${cp.url}${path}`;
    const callSystemOne = (key: string) =>
      fetch(api('/v1/systemone'), {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    test('sign up, verify by email and land signed in, sign in, 3 keys, use, revoke, usage, sign out', async () => {
      const email = `ada-${kind}@example.com`;
      const b = createBrowser({ origin: cp.url });

      // Sign-up: weak passwords get a clear 400 naming the field and the limit.
      const weak = await b.request(api('/control/v1/auth/sign-up/email'), { body: { email, password: 'short' } });
      assert.equal(weak.status, 400);
      assert.match((await weak.json()).message, /password: must be at least 10 characters/);
      const signUp = await b.request(api('/control/v1/auth/sign-up/email'), { body: { email, password: PASSWORD } });
      assert.equal(signUp.status, 200, await signUp.clone().text());
      assert.ok(
        !b.jar.size || ![...b.jar.keys()].some((k) => k.includes('session_token')),
        'no session before verification',
      );

      // The email arrives over SMTP with a single-use link.
      const mail = await cp.smtp.waitFor(email, /verify/i);
      const link = linkIn(mail);
      assert.match(link, new RegExp(`^${cp.url}/control/v1/auth/verify-email\\?token=`));

      // Unverified: no console session, and a key made behind its back does not work on the API.
      const early = await b.request(api('/control/v1/auth/sign-in/email'), { body: { email, password: PASSWORD } });
      assert.equal(early.status, 403);
      const earlyBody = await early.json();
      assert.equal(earlyBody.detail.error_type, 'email_not_verified');
      assert.match(earlyBody.message, /verification email/);
      const user = await cp.db.kysely
        .selectFrom('user')
        .select('id')
        .where('email', '=', email)
        .executeTakeFirstOrThrow();
      const sneaky = await cp.services.keys.create(user.id, 'made by the operator');
      const refused = await callSystemOne(sneaky.key);
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).detail.error_type, 'email_not_verified');
      assert.equal(await cp.services.keys.revoke(user.id, sneaky.id), true);
      const noSession = await b.request(api('/control/v1/keys'), { body: { name: 'x' } });
      assert.equal(noSession.status, 401);

      // Verify; the link signs the browser in (no second sign-in by hand) and works once.
      const verified = await b.request(link);
      assert.ok(verified.status === 200 || verified.status === 302, `verify answered ${verified.status}`);
      const verifyCookie = verified.headers.getSetCookie().find((c) => c.startsWith('brier.session_token='));
      assert.ok(verifyCookie, 'the verification link sets a session cookie');
      assert.match(verifyCookie, /HttpOnly/i);
      assert.match(verifyCookie, /SameSite=Lax/i);
      const landed = await (await b.request(api('/control/v1/auth/get-session'))).json();
      assert.equal(landed?.user?.email, email);
      assert.equal(landed.user.emailVerified, true);
      const again = await b.request(link);
      assert.equal(again.status, 400);
      assert.match((await again.json()).message, /already used/);

      // Sign in: an HttpOnly, SameSite cookie; no token in the body.
      const signIn = await b.request(api('/control/v1/auth/sign-in/email'), { body: { email, password: PASSWORD } });
      assert.equal(signIn.status, 200);
      const setCookie = signIn.headers.getSetCookie().find((c) => c.startsWith('brier.session_token='));
      assert.ok(setCookie, 'session cookie set');
      assert.match(setCookie, /HttpOnly/i);
      assert.match(setCookie, /SameSite=Lax/i);
      assert.doesNotMatch(setCookie, /Secure/i, 'not Secure over plain http');
      const signInBody = await signIn.json();
      assert.equal(signInBody.token, undefined);
      assert.equal(signInBody.user.email, email);

      // Three keys, then a clear 409.
      const created: { id: string; key: string; prefix: string }[] = [];
      for (const name of ['one', 'two', 'three']) {
        const res = await b.request(api('/control/v1/keys'), { body: { name } });
        assert.equal(res.status, 201);
        const k = await res.json();
        assert.match(k.key, /^brier_sk_/);
        assert.ok(k.key.startsWith(k.prefix));
        assert.equal(k.name, name);
        assert.equal(k.last_used_at, null);
        created.push(k);
      }
      const fourth = await b.request(api('/control/v1/keys'), { body: { name: 'four' } });
      assert.equal(fourth.status, 409);
      const fourthBody = await fourth.json();
      assert.equal(fourthBody.detail.error_type, 'key_limit_reached');
      assert.match(fourthBody.message, /3 active API keys \(the limit\); revoke one/);
      const [k1, k2, k3] = created as [(typeof created)[0], (typeof created)[0], (typeof created)[0]];

      // The keys work on the inference API.
      assert.equal((await callSystemOne(k1.key)).status, 200);
      assert.equal((await callSystemOne(k1.key)).status, 200);
      assert.equal((await callSystemOne(k2.key)).status, 200);

      // Never returned again.
      const listed = await b.request(api('/control/v1/keys'));
      assert.equal(listed.status, 200);
      const listText = await listed.text();
      for (const k of created) assert.ok(!listText.includes(k.key), 'the key value is never listed');
      const list = JSON.parse(listText).data as { id: string; key?: string; last_used_at: string | null }[];
      assert.equal(list.length, 3);
      assert.ok(list.every((k) => k.key === undefined));

      // Revoke: stops at once, no longer listed.
      const revoked = await b.request(api(`/control/v1/keys/${k1.id}`), { method: 'DELETE' });
      assert.equal(revoked.status, 204);
      assert.equal((await callSystemOne(k1.key)).status, 401);
      const after = (await (await b.request(api('/control/v1/keys'))).json()).data as { id: string }[];
      assert.deepEqual(
        after.map((k) => k.id),
        [k2.id, k3.id],
      );
      assert.equal((await b.request(api(`/control/v1/keys/${k1.id}`), { method: 'DELETE' })).status, 404);

      // Usage, per account (session) and per key (bearer).
      const usage = await b.request(api('/control/v1/usage'));
      assert.equal(usage.status, 200);
      const report = await usage.json();
      assert.equal(report.window.days, 30);
      assert.equal(report.daily.length, 30);
      assert.equal(report.totals.requests, 3);
      assert.equal(report.totals.questions, 3);
      assert.ok(report.totals.input_tokens > 0);
      assert.equal(report.daily.at(-1).requests, 3);
      assert.equal(report.daily[0].requests, 0, 'zero-filled');
      assert.deepEqual(
        report.keys.map((k: { id: string; totals: { requests: number } }) => [k.id, k.totals.requests]),
        [
          [k2.id, 1],
          [k3.id, 0],
        ],
      );
      const byKey = await fetch(api('/control/v1/usage?days=7'), { headers: { authorization: `Bearer ${k2.key}` } });
      assert.equal(byKey.status, 200);
      const keyReport = await byKey.json();
      assert.equal(keyReport.daily.length, 7);
      assert.equal(keyReport.totals.requests, 1);
      assert.deepEqual(
        keyReport.keys.map((k: { id: string }) => k.id),
        [k2.id],
      );
      const badWindow = await b.request(api('/control/v1/usage?days=0'));
      assert.equal(badWindow.status, 422);
      const lastUsed = (await (await b.request(api('/control/v1/keys'))).json()).data[0];
      assert.ok(lastUsed.last_used_at, 'last used is shown');

      // Sign out ends the session.
      const out = await b.request(api('/control/v1/auth/sign-out'), { method: 'POST', body: {} });
      assert.equal(out.status, 200);
      assert.equal((await b.request(api('/control/v1/keys'))).status, 401);
    });

    test('10 concurrent creates over HTTP yield exactly 3 keys', async () => {
      const b = await verifiedSession(cp, `race-${kind}@example.com`);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => b.request(api('/control/v1/keys'), { body: { name: `k${i}` } })),
      );
      assert.equal(results.filter((r) => r.status === 201).length, 3);
      assert.equal(results.filter((r) => r.status === 409).length, 7);
      assert.equal((await (await b.request(api('/control/v1/keys'))).json()).data.length, 3);
    });

    test('CSRF: cookie-authenticated mutations from other origins, or with no origin, are refused', async () => {
      const b = await verifiedSession(cp, `csrf-${kind}@example.com`);
      const evil = await b.request(api('/control/v1/keys'), {
        body: { name: 'x' },
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(evil.status, 403);
      assert.equal((await evil.json()).detail.error_type, 'csrf_rejected');
      const none = await b.request(api('/control/v1/keys'), { body: { name: 'x' }, headers: { origin: '' } });
      assert.equal(none.status, 403);
      const del = await b.request(api('/control/v1/account'), {
        method: 'DELETE',
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(del.status, 403);
      const loginCsrf = await b.request(api('/control/v1/auth/sign-in/email'), {
        body: { email: 'x@example.com', password: PASSWORD },
        headers: { origin: 'https://evil.example', cookie: '' },
      });
      assert.equal(loginCsrf.status, 403);
      // The documentation site is trusted.
      const site = await b.request(api('/control/v1/keys'), {
        body: { name: 'from the site' },
        headers: { origin: SITE_ORIGIN },
      });
      assert.equal(site.status, 201);
    });

    test('CORS: credentials for the site on /control/v1 only; other origins get no grant', async () => {
      const pre = (path: string, origin: string) =>
        fetch(api(path), {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
      const control = await pre('/control/v1/keys', SITE_ORIGIN);
      assert.equal(control.headers.get('access-control-allow-origin'), SITE_ORIGIN);
      assert.equal(control.headers.get('access-control-allow-credentials'), 'true');
      const v1 = await pre('/v1/systemone', SITE_ORIGIN);
      assert.equal(v1.headers.get('access-control-allow-origin'), SITE_ORIGIN);
      assert.equal(v1.headers.get('access-control-allow-credentials'), null);
      const evil = await pre('/control/v1/keys', 'https://evil.example');
      assert.notEqual(evil.headers.get('access-control-allow-origin'), 'https://evil.example');
    });

    test('rate limits: resend verification and sign-in per account; generic answers', async () => {
      const email = `limits-${kind}@example.com`;
      const b = createBrowser({ origin: cp.url });
      assert.equal(
        (await b.request(api('/control/v1/auth/sign-up/email'), { body: { email, password: PASSWORD } })).status,
        200,
      );
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await b.request(api('/control/v1/auth/send-verification-email'), { body: { email } })).status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);

      // Wrong password and unknown account read the same.
      const wrong = await b.request(api('/control/v1/auth/sign-in/email'), {
        body: { email, password: 'wrong password!!' },
      });
      const unknown = await b.request(api('/control/v1/auth/sign-in/email'), {
        body: { email: `nobody-${kind}@example.com`, password: 'wrong password!!' },
      });
      assert.equal(wrong.status, 401);
      assert.equal(unknown.status, 401);
      assert.equal((await wrong.json()).message, (await unknown.json()).message);
      // Sign-up with a taken address answers like a new one.
      const dup = await b.request(api('/control/v1/auth/sign-up/email'), { body: { email, password: PASSWORD } });
      assert.equal(dup.status, 200);
      // Reset for a known and an unknown address answer alike.
      const r1 = await b.request(api('/control/v1/auth/request-password-reset'), { body: { email } });
      const r2 = await b.request(api('/control/v1/auth/request-password-reset'), {
        body: { email: `nobody-${kind}@example.com` },
      });
      assert.equal(r1.status, r2.status);
      assert.deepEqual(await r1.json(), await r2.json());

      let last = 0;
      for (let i = 0; i < 12 && last !== 429; i++) {
        last = (
          await b.request(api('/control/v1/auth/sign-in/email'), { body: { email, password: 'wrong password!!' } })
        ).status;
      }
      assert.equal(last, 429);
      const limited = await b.request(api('/control/v1/auth/sign-in/email'), { body: { email, password: PASSWORD } });
      assert.equal(limited.status, 429);
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal((await limited.json()).detail.error_type, 'rate_limit_exceeded');
    });

    test('password reset by email', async () => {
      const email = `reset-${kind}@example.com`;
      const b = await verifiedSession(cp, email);
      const req = await b.request(api('/control/v1/auth/request-password-reset'), { body: { email }, cookies: false });
      assert.equal(req.status, 200);
      const mail = await cp.smtp.waitFor(email, /reset/i);
      const token = /reset-password\/([^?\s]+)/.exec(linkIn(mail))?.[1];
      assert.ok(token, linkIn(mail));
      const weak = await b.request(api('/control/v1/auth/reset-password'), {
        body: { token, newPassword: 'aaaaaaaaaaaa' },
        cookies: false,
      });
      assert.equal(weak.status, 400);
      const ok = await b.request(api('/control/v1/auth/reset-password'), {
        body: { token, newPassword: 'a brand new passphrase' },
        cookies: false,
      });
      assert.equal(ok.status, 200);
      // Sessions ended; the old password is dead, the new one works; the token works once.
      assert.equal((await b.request(api('/control/v1/keys'))).status, 401);
      const fresh = createBrowser({ origin: cp.url });
      assert.equal(
        (await fresh.request(api('/control/v1/auth/sign-in/email'), { body: { email, password: PASSWORD } })).status,
        401,
      );
      assert.equal(
        (
          await fresh.request(api('/control/v1/auth/sign-in/email'), {
            body: { email, password: 'a brand new passphrase' },
          })
        ).status,
        200,
      );
      const reuse = await fresh.request(api('/control/v1/auth/reset-password'), {
        body: { token, newPassword: 'another new passphrase' },
        cookies: false,
      });
      assert.equal(reuse.status, 400);
    });

    test('OIDC sign-in lands in a verified session', async () => {
      const b = createBrowser({ origin: cp.url });
      cp.idp.signInAs({
        sub: `grace-${kind}`,
        email: `grace-${kind}@example.com`,
        email_verified: true,
        name: 'Grace',
      });
      const { session } = await oidcSignIn(cp, b);
      assert.equal(session.user.email, `grace-${kind}@example.com`);
      const account = await (await b.request(api('/control/v1/account'))).json();
      assert.equal(account.email_verified, true);
      assert.equal((await b.request(api('/control/v1/keys'), { body: { name: 'sso' } })).status, 201);
    });

    test('OIDC cannot take over a password account: unverified squats are not joined, unverified IdP emails neither', async () => {
      // An attacker signs up with the victim's address and never verifies it.
      const victim = `victim-${kind}@example.com`;
      const attacker = createBrowser({ origin: cp.url });
      assert.equal(
        (await attacker.request(api('/control/v1/auth/sign-up/email'), { body: { email: victim, password: PASSWORD } }))
          .status,
        200,
      );
      const b = createBrowser({ origin: cp.url });
      cp.idp.signInAs({ sub: `victim-${kind}`, email: victim, email_verified: true, name: 'Victim' });
      const first = await oidcSignIn(cp, b, false);
      assert.equal(first.session, null, 'not joined to the unverified password account');
      assert.match(first.landing, /error=/);
      // The attacker's password still does not open anything.
      assert.equal(
        (await attacker.request(api('/control/v1/auth/sign-in/email'), { body: { email: victim, password: PASSWORD } }))
          .status,
        403,
      );

      // An IdP that does not vouch for the address cannot join a verified password account.
      const owner = `owner-${kind}@example.com`;
      await verifiedSession(cp, owner);
      const c = createBrowser({ origin: cp.url });
      cp.idp.signInAs({ sub: `impostor-${kind}`, email: owner, email_verified: false, name: 'Impostor' });
      const second = await oidcSignIn(cp, c, false);
      assert.equal(second.session, null);
    });

    test('DELETE /control/v1/account revokes keys, ends sessions, keeps usage only in aggregate', async () => {
      const email = `leaver-${kind}@example.com`;
      const b = await verifiedSession(cp, email);
      const k = await (await b.request(api('/control/v1/keys'), { body: { name: 'k' } })).json();
      assert.equal((await callSystemOne(k.key)).status, 200);
      // A request an adapter's fallback sent to a teacher (issue 34) counts its teacher calls.
      const leaver = await cp.db.kysely
        .selectFrom('user')
        .select('id')
        .where('email', '=', email)
        .executeTakeFirstOrThrow();
      await cp.db.kysely
        .insertInto('usage_event')
        .values({
          event_id: `fallback-${kind}`,
          user_id: leaver.id,
          key_id: k.id,
          ts: Date.now(),
          route: '/v1/systemone',
          model: 'brier-lite',
          status: 200,
          questions: 1,
          input_tokens: 10,
          output_tokens: 2,
          latency_ms: 5,
          teacher_calls: 2,
        })
        .execute();
      // A distillation job's teacher call (issue 41): no key, not a request, one teacher call.
      await cp.db.kysely
        .insertInto('usage_event')
        .values({
          event_id: `job-${kind}`,
          user_id: leaver.id,
          key_id: '',
          job_id: 'job_leaver',
          ts: Date.now(),
          route: 'distillation-job',
          model: 'teacher:t',
          status: 200,
          questions: 0,
          input_tokens: 0,
          output_tokens: 0,
          latency_ms: 5,
          teacher_calls: 1,
        })
        .execute();
      const before = await cp.db.kysely.selectFrom('usage_aggregate').select(['requests', 'teacher_calls']).execute();
      const del = await b.request(api('/control/v1/account'), { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.deepEqual(await del.json(), { deleted: true, revoked_keys: 1 });
      assert.equal((await callSystemOne(k.key)).status, 401);
      assert.equal((await b.request(api('/control/v1/keys'))).status, 401);
      const user = await cp.db.kysely.selectFrom('user').select('id').where('email', '=', email).executeTakeFirst();
      assert.equal(user, undefined);
      const events = await cp.db.kysely.selectFrom('usage_event').select('id').where('key_id', '=', k.id).execute();
      assert.equal(events.length, 0);
      const agg = await cp.db.kysely.selectFrom('usage_aggregate').select(['requests', 'teacher_calls']).execute();
      const sum = (
        rows: { requests: number | string; teacher_calls: number | string }[],
        f: 'requests' | 'teacher_calls',
      ) => rows.reduce((a, r) => a + Number(r[f]), 0);
      assert.equal(sum(agg, 'requests') - sum(before, 'requests'), 2, "a job's teacher call is not a request");
      assert.equal(sum(agg, 'teacher_calls') - sum(before, 'teacher_calls'), 3, 'teacher calls are kept in aggregate');
    });

    test('every control endpoint is in the OpenAPI document with its errors', async () => {
      const doc = await (await fetch(api('/openapi.json'))).json();
      const expect: [string, string, string[]][] = [
        ['/control/v1/keys', 'post', ['201', '401', '403', '409', '422']],
        ['/control/v1/keys', 'get', ['200', '401', '403']],
        ['/control/v1/keys/{id}', 'delete', ['204', '401', '403', '404']],
        ['/control/v1/usage', 'get', ['200', '401', '403', '422']],
        ['/control/v1/account', 'delete', ['200', '401', '403']],
        ['/control/v1/auth/sign-up/email', 'post', ['200', '400', '429']],
        ['/control/v1/auth/sign-in/email', 'post', ['200', '401', '403', '429']],
        ['/control/v1/auth/verify-email', 'get', ['200', '400']],
        ['/control/v1/auth/request-password-reset', 'post', ['200', '429']],
        ['/control/v1/auth/sign-in/social', 'post', ['200']],
        ['/control/v1/auth/callback/{provider}', 'get', ['302', '400']],
      ];
      for (const [path, method, statuses] of expect) {
        const op = doc.paths[path]?.[method];
        assert.ok(op, `${method} ${path} documented`);
        for (const s of statuses) assert.ok(op.responses[s], `${method} ${path} documents ${s}`);
      }
      assert.ok(doc.components.schemas.UsageReport);
    });
  });
}

/** Signs up and follows the emailed link, which signs the browser in; returns the browser holding the session. */
async function verifiedSession(cp: ControlPlane, email: string) {
  const b = createBrowser({ origin: cp.url });
  const up = await b.request(`${cp.url}/control/v1/auth/sign-up/email`, { body: { email, password: PASSWORD } });
  assert.equal(up.status, 200);
  const link = linkIn(await cp.smtp.waitFor(email, /verify/i));
  const v = await b.request(link);
  assert.ok(v.status < 400);
  const session = await (await b.request(`${cp.url}/control/v1/auth/get-session`)).json();
  assert.equal(session?.user?.email, email, 'signed in by the verification link');
  return b;
}

/** Runs the browser through the IdP and back; answers the session (or null) and where it landed. */
async function oidcSignIn(cp: ControlPlane, b: ReturnType<typeof createBrowser>, expectSession = true) {
  const start = await b.request(`${cp.url}/control/v1/auth/sign-in/social`, {
    body: { provider: 'oidc', callbackURL: '/console', errorCallbackURL: '/console/error' },
  });
  assert.equal(start.status, 200, await start.clone().text());
  const { url } = (await start.json()) as { url: string };
  assert.ok(url.startsWith(cp.idp.issuer));
  const { url: landing } = await b.follow(url, (u) => u.startsWith(`${cp.url}/console`));
  const session = await (await b.request(`${cp.url}/control/v1/auth/get-session`)).json();
  if (expectSession) assert.ok(session, `a session after landing on ${landing}`);
  return { session, landing };
}
