import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAppClient } from '../../../test/fixtures/app-client.ts';
import { makeTestApp } from '../../../test/harness.ts';
import { resolveClientAddress, trustedSet } from './client-address.ts';

describe('client address behind load balancers (BRIER_TRUSTED_PROXIES)', () => {
  const trusted = trustedSet(['10.0.0.7', '192.168.0.0/16', 'fd00::/8']);

  test('a trusted proxy: the right-most forwarded address that is not a trusted proxy', () => {
    assert.equal(resolveClientAddress('10.0.0.7', '203.0.113.9', trusted), '203.0.113.9');
    assert.equal(
      resolveClientAddress('::ffff:10.0.0.7', '198.51.100.1, 203.0.113.9, 192.168.4.4', trusted),
      '203.0.113.9',
    );
    assert.equal(resolveClientAddress('fd00::1', '2001:db8::5', trusted), '2001:db8::5');
  });

  test('anyone else: the socket address, whatever X-Forwarded-For says', () => {
    assert.equal(resolveClientAddress('203.0.113.50', '10.9.9.9', trusted), '203.0.113.50');
    assert.equal(resolveClientAddress('10.0.0.8', '10.9.9.9', trusted), '10.0.0.8');
  });

  test('a forwarded hop that is not an address stops the walk at the last good one', () => {
    assert.equal(resolveClientAddress('10.0.0.7', 'garbage', trusted), '10.0.0.7');
    assert.equal(resolveClientAddress('10.0.0.7', 'unknown, 192.168.1.1', trusted), '192.168.1.1');
  });

  test('entries that are not addresses or ranges are refused', () => {
    assert.throws(() => trustedSet(['not-an-ip']), /not an IP address/);
    assert.throws(() => trustedSet(['10.0.0.0/40']), /prefix/);
  });

  test('sign-in budgets count per client behind a trusted load balancer, not per load balancer', async () => {
    const rules = { '/sign-in/email': { what: 'sign-in', ip: { points: 2, durationS: 600 } } };
    const attempt = (client: ReturnType<typeof createAppClient>, forwarded: string) =>
      client.request('/control/v1/auth/sign-in/email', {
        body: { email: 'nobody@example.com', password: 'wrong-password-1' },
        headers: { 'x-forwarded-for': forwarded },
      });
    const behind = await makeTestApp({ trustedProxies: ['192.0.2.1'], authRateRules: rules });
    const open = await makeTestApp({ authRateRules: rules });
    try {
      // The same load balancer (192.0.2.1) forwards two clients, two attempts each.
      const lb = createAppClient(behind.app, '192.0.2.1');
      const statuses = [];
      for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.1', '203.0.113.2'])
        statuses.push((await attempt(lb, ip)).status);
      assert.deepEqual(statuses, [401, 401, 401, 401]);
      assert.equal((await attempt(lb, '203.0.113.1')).status, 429, 'each client has its own budget');
      // Not trusted: the forwarded header is ignored and both share the socket's budget.
      const direct = createAppClient(open.app, '192.0.2.1');
      const shared = [];
      for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) shared.push((await attempt(direct, ip)).status);
      assert.deepEqual(shared, [401, 401, 429]);
    } finally {
      await behind.close();
      await open.close();
    }
  });
});
