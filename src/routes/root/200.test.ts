import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTestApp, type TestApp } from '../../../test/harness.ts';

describe('GET / 200 (an API client)', () => {
  let t: TestApp;
  before(async () => {
    t = await makeTestApp();
  });
  after(() => t.close());

  test('says where things are, as JSON, to a client that does not prefer HTML', async () => {
    const accepts: Record<string, string>[] = [
      {},
      { accept: '*/*' },
      { accept: 'application/json' },
      { accept: 'text/html;q=0.5, application/json' },
    ];
    for (const headers of accepts) {
      const res = await t.app.request('/', { headers });
      assert.equal(res.status, 200, JSON.stringify(headers));
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('vary'), 'Accept');
      const body = await res.json();
      assert.equal(body.name, 'Brier');
      assert.deepEqual(body.links, {
        console: '/console/',
        docs: '/docs/',
        systemone: '/v1/systemone',
        models: '/v1/models',
        openapi: '/openapi.json',
        healthz: '/healthz',
      });
    }
  });

  test('each link it gives is served here (none is a 404)', async () => {
    const { links } = await (await t.app.request('/')).json();
    for (const path of Object.values(links) as string[]) {
      const post = path === links.systemone;
      const res = await t.req(path, post ? { body: { state: 's', questions: { q: { type: 'noul' } } } } : {});
      assert.notEqual(res.status, 404, path);
    }
  });

  test('HEAD answers too, and / is in the OpenAPI document', async () => {
    assert.equal((await t.app.request('/', { method: 'HEAD' })).status, 200);
    const doc = await (await t.app.request('/openapi.json')).json();
    assert.ok(doc.paths['/']?.get, 'GET / is documented');
  });
});
