import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOpenApiApp } from '../../http/api.ts';
import { registerRoot } from './route.ts';

function app() {
  const a = createOpenApiApp();
  registerRoot(a);
  return a;
}

test('/ redirects a browser (Accept preferring text/html) to the console', async () => {
  for (const accept of [
    'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
    'text/html',
    'text/*, application/json;q=0.5',
  ]) {
    const res = await app().request('/', { headers: { accept } });
    assert.equal(res.status, 302, accept);
    assert.equal(res.headers.get('location'), '/console/');
    assert.equal(res.headers.get('vary'), 'Accept');
  }
});
