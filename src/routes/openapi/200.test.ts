import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../test/harness.ts';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>>; components: Record<string, unknown> };

const KEY = [{ bearer: [] }];
const SESSION = [{ session: [] }];

describe('GET /openapi.json', () => {
  let t: TestApp;
  let doc: Doc;
  before(async () => {
    t = await makeTestApp();
    const res = await t.req('/openapi.json', { headers: { authorization: '' } });
    assert.equal(res.status, 200);
    doc = await res.json();
  });
  after(() => t.close());

  test('200 without credentials: an OpenAPI 3.1 document with the bearer and session schemes', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.components.securitySchemes, {
      bearer: { type: 'http', scheme: 'bearer', description: 'An API key: brier_sk_...' },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: 'brier.session_token',
        description: 'The console session, set by /control/v1/auth/sign-in/* (HttpOnly, SameSite=Lax)',
      },
    });
  });

  test("each route's security is the credential it declares, at its full path under its sub-app", () => {
    const security = (path: string, method: string) => doc.paths[path]?.[method]?.security;
    assert.deepEqual(security('/v1/models', 'get'), KEY);
    assert.deepEqual(security('/v1/systemone', 'post'), KEY);
    for (const [path, method] of [
      ['/control/v1/keys', 'post'],
      ['/control/v1/keys', 'get'],
      ['/control/v1/keys/{id}', 'delete'],
      ['/control/v1/account', 'get'],
      ['/control/v1/account', 'delete'],
      ['/control/v1/model', 'get'],
      ['/control/v1/playground/systemone', 'post'],
    ] as const) {
      assert.deepEqual(security(path, method), SESSION, `${method} ${path}`);
    }
    assert.deepEqual(security('/control/v1/usage', 'get'), [...KEY, ...SESSION]);
    assert.ok(doc.paths['/control/v1/auth-providers']?.get, 'auth-providers is documented');
    assert.equal(security('/control/v1/auth-providers', 'get'), undefined);
    assert.equal(security('/healthz', 'get'), undefined);
  });

  test('on an https server the session scheme names the __Secure- cookie', async () => {
    const secure = await makeTestApp({ publicUrl: 'https://brier.example' });
    try {
      const res = await secure.req('/openapi.json', { headers: { authorization: '' } });
      const body: Doc = await res.json();
      const schemes = body.components.securitySchemes as Record<string, { name?: string }>;
      assert.equal(schemes.session?.name, '__Secure-brier.session_token');
    } finally {
      await secure.close();
    }
  });
});
