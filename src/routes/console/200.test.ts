import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CONSOLE_FILES, tempSite } from '../../../test/fixtures/static-sites.ts';
import { createOpenApiApp } from '../../http/api.ts';
import { registerConsole } from './route.ts';

const site = tempSite('brier-console-', CONSOLE_FILES);
after(() => site.remove());

function app() {
  const a = createOpenApiApp();
  registerConsole(a, { dir: site.dir });
  return a;
}

test('serves index.html for every console path (SPA fallback), revalidated, with its CSP', async () => {
  const a = app();
  for (const url of ['/console', '/console/', '/console/keys', '/console/playground?x=1']) {
    const res = await a.request(url);
    assert.equal(res.status, 200, url);
    assert.equal(await res.text(), '<!doctype html><title>console</title>');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  }
  const head = await a.request('/console/keys', { method: 'HEAD' });
  assert.equal(head.status, 200);
});

test('serves hashed assets with their type and immutable caching', async () => {
  const js = await app().request('/console/assets/index-abc123.js');
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /text\/javascript/);
  assert.match(js.headers.get('cache-control') ?? '', /immutable/);
});
