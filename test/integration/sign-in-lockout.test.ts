import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AuthRateRule, DEFAULT_AUTH_RATE_RULES } from '../../src/http/middleware/rate-limit.ts';
import { createAppClient } from '../fixtures/app-client.ts';
import { makeTestApp, type TestApp } from '../harness.ts';

const PASSWORD = 'correct horse battery';
const WRONG = 'wrong horse battery';
const SLOW_MS = 600;

/** Small budgets, so that the tests stay short; the rules' shapes are the defaults'. */
const RULES: Record<string, AuthRateRule> = {
  ...DEFAULT_AUTH_RATE_RULES,
  '/sign-in/email': {
    what: 'sign-in',
    ip: { points: 8, durationS: 60 },
    pair: { points: 3, durationS: 60 },
    pairCountsFailuresOnly: true,
    slowdown: { freeFailures: 4, baseDelayMs: SLOW_MS, maxDelayMs: SLOW_MS, durationS: 60 },
  },
  '/request-password-reset': {
    what: 'password reset',
    ip: { points: 10, durationS: 60 },
    pair: { points: 2, durationS: 60 },
    account: { points: 5, durationS: 60 },
  },
  '/send-verification-email': {
    what: 'verification email',
    ip: { points: 10, durationS: 60 },
    pair: { points: 2, durationS: 60 },
    account: { points: 5, durationS: 60 },
  },
};

// The rate limiter keeps its counts in memory whatever the database: SQLite is enough here.
describe('sign-in limits by IP and account without locking the owner out', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp({ authRateRules: RULES });
  });
  after(() => t.close());

  async function owner(email: string, verify = true): Promise<void> {
    const c = createAppClient(t.app, '198.51.100.1');
    assert.equal(
      (await c.request('/control/v1/auth/sign-up/email', { body: { email, password: PASSWORD } })).status,
      200,
    );
    if (!verify) return;
    const link = t.outbox.findLast((m) => m.to === email && /verify/i.test(m.subject))?.link;
    assert.ok(link);
    assert.ok((await c.request(link)).status < 400);
  }

  const signIn = (ip: string, email: string, password: string) =>
    createAppClient(t.app, ip).request('/control/v1/auth/sign-in/email', { body: { email, password } });

  test('an attacker who used up the failures from one IP is refused there; the owner signs in from another IP', async () => {
    const email = `target@example.com`;
    await owner(email);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn('203.0.113.66', email, WRONG)).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);

    const refused = await signIn('203.0.113.66', email, PASSWORD);
    assert.equal(refused.status, 429, 'the attacker IP is refused even with the right password');
    assert.ok(Number(refused.headers.get('retry-after')) > 0);
    const body = await refused.json();
    assert.equal(body.detail.error_type, 'rate_limit_exceeded');
    assert.match(body.message, /^too many sign-in attempts; retry after \d+ seconds$/);

    assert.equal((await signIn('198.51.100.7', email, PASSWORD)).status, 200, 'the owner, elsewhere, gets in');
  });

  test('a success clears the count of its (account, IP) pair', async () => {
    const email = 'typo@example.com';
    await owner(email);
    const ip = '198.51.100.20';
    assert.equal((await signIn(ip, email, WRONG)).status, 401);
    assert.equal((await signIn(ip, email, WRONG)).status, 401);
    assert.equal((await signIn(ip, email, PASSWORD)).status, 200);
    const after: number[] = [];
    for (let i = 0; i < 4; i++) after.push((await signIn(ip, email, WRONG)).status);
    assert.deepEqual(after, [401, 401, 401, 429], 'a fresh budget of 3 after the success');
  });

  test('per IP every attempt counts, whatever the account and the answer', async () => {
    const email = 'busy@example.com';
    await owner(email);
    const ip = '203.0.113.77';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await signIn(ip, `nobody-${i}@example.com`, WRONG)).status);
    for (let i = 0; i < 2; i++) statuses.push((await signIn(ip, email, PASSWORD)).status);
    statuses.push((await signIn(ip, email, PASSWORD)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 200, 200, 429], 'eight attempts per IP');
  });

  test('failures from many IPs slow the account down but never refuse the right password', async () => {
    const email = 'spread@example.com';
    await owner(email);
    // Five addresses, one failure each: no pair and no IP is near its budget, the account is past 4.
    for (let i = 0; i < 5; i++) assert.equal((await signIn(`203.0.113.${100 + i}`, email, WRONG)).status, 401);

    const started = performance.now();
    const res = await signIn('198.51.100.40', email, PASSWORD);
    const elapsed = performance.now() - started;
    assert.equal(res.status, 200);
    assert.ok(elapsed >= SLOW_MS - 5, `held for the slowdown (${Math.round(elapsed)} ms)`);
  });

  for (const [path, what] of [
    ['/control/v1/auth/request-password-reset', 'password reset'],
    ['/control/v1/auth/send-verification-email', 'verification email'],
  ] as const) {
    test(`one address asking for the owner's ${what} cannot block the owner's own; the account's cap still holds`, async () => {
      const email = `mail-${what.replace(' ', '-')}@example.com`;
      // Someone waiting for a verification email has not verified yet.
      await owner(email, what === 'password reset');
      const ask = (ip: string) => createAppClient(t.app, ip).request(path, { body: { email } });
      assert.deepEqual([(await ask('203.0.113.9')).status, (await ask('203.0.113.9')).status], [200, 200]);
      const third = await ask('203.0.113.9');
      assert.equal(third.status, 429);
      assert.match((await third.json()).message, new RegExp(`^too many ${what} attempts; retry after \\d+ seconds$`));
      assert.equal((await ask('198.51.100.50')).status, 200, 'the owner, elsewhere, still gets the mail');
      // 2 + 1 asked so far; two more from other addresses reach the account's cap of 5.
      assert.equal((await ask('203.0.113.10')).status, 200);
      assert.equal((await ask('203.0.113.11')).status, 200);
      assert.equal((await ask('203.0.113.12')).status, 429, 'the mail one account gets is capped');
    });
  }
});
