/**
 * A route's `auth` declaration sets both its OpenAPI security and its guard: every documented
 * operation that names a security scheme refuses a request with no credential (401 or 403), and
 * every one that names none answers it. The better-auth endpoints under /control/v1/auth are
 * documented only (better-auth reads their session itself), so they are left out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../harness.ts';

type Doc = { paths: Record<string, Record<string, { security?: unknown[] }>> };

describe('documented security is enforced security', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('operations with a security scheme refuse no credential; operations without one answer it', async () => {
    const doc: Doc = await (await t.req('/openapi.json', { headers: { authorization: '' } })).json();
    let checked = 0;
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (path.startsWith('/control/v1/auth/')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const url = path.replaceAll(/{[^}]+}/g, 'x');
        const body = method === 'get' ? undefined : {};
        const res = await t.req(url, { method: method.toUpperCase(), body, headers: { authorization: '' } });
        if (operation.security) {
          assert.ok([401, 403].includes(res.status), `${method} ${path}: ${res.status} without a credential`);
        } else {
          assert.ok(![401, 403].includes(res.status), `${method} ${path}: ${res.status} without a credential`);
        }
        checked += 1;
      }
    }
    assert.ok(checked >= 11, `${checked} operations checked`);
  });
});
